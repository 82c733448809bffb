"""Examples built on cdk-ts: not part of the installed library."""
