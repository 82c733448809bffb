"""Lambda entry points of the functions cdk-ts deploys: each parses its event, builds one object, calls it."""
