"""One botocore data loader for the whole test process, so AWS's JSON models are parsed once, not once a test.

``mock_aws`` sets ``boto3.DEFAULT_SESSION`` to ``None`` for every test, so each test's first ``boto3.client`` builds a
new botocore session, and each session builds its own ``Loader``: the endpoint rules, partitions and every service
model were decoded from JSON again in every test (about a third of a moto-backed runtime test's CPU). botocore
already shares one loader's parsed models between all the clients of a session
(``botocore.loaders.instance_cache``); this shares it between sessions too. Sessions, clients, credentials, event
hooks and moto's state stay per test: only the read-only parsed JSON is shared.
"""

from __future__ import annotations

import functools

import botocore.loaders
import botocore.session


def share_parsed_models() -> None:
    """Make every botocore session of this process use one ``Loader`` per ``AWS_DATA_PATH`` value."""
    if isinstance(botocore.session.create_loader, functools._lru_cache_wrapper):
        return
    # session.py binds the name at import (``from botocore.loaders import create_loader``): patch it there.
    botocore.session.create_loader = functools.cache(botocore.loaders.create_loader)
