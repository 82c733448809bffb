"""Lambda entry points of the functions cdk-ts deploys: each parses its event, builds one object, calls it.

The entry points are public and keep their paths (templates name them):
``cdk_ts_runtime.handlers.rotation.handler``, ``cdk_ts_runtime.handlers.archiver.handler``,
``cdk_ts_runtime.handlers.compaction.handler``, ``cdk_ts_runtime.handlers.throttled_keys_rule.handler`` and
``cdk_ts_runtime.handlers.throttled_keys_widget.handler``.
Everything else in these modules (``custom_resource`` included) is their machinery, not a promise.
"""
