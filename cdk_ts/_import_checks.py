"""What the ``from_…`` importers check at synth time: values that cannot name a resource fail at once, by name.

An importer creates nothing, so a wrong value (an ARN where a name is asked, a bucket name S3 never allows, an
account that is not 12 digits, a string where a KMS key is expected) would otherwise show only at the first
grant, or as a policy that names nothing, at deploy time or later. Deploy-time tokens are skipped: they cannot
be checked at synth.
"""

from __future__ import annotations

import re

from cdk_ts._defaults import is_unresolved
from cdk_ts._validation import Problems

# S3's general purpose bucket naming rules (Amazon S3 User Guide, "General purpose bucket naming rules"):
# 3-63 characters of lowercase letters, numbers, periods and hyphens; starting and ending with a letter or
# number; no two adjacent periods; not formatted as an IP address; not starting with xn--, sthree- or
# amzn-s3-demo-; not ending with -s3alias, --ol-s3, .mrap, --x-s3 or --table-s3 (reserved for aliases and
# other bucket types).
_BUCKET_NAME = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
_IP_ADDRESS = re.compile(r"\d{1,3}(\.\d{1,3}){3}")
_RESERVED_PREFIXES = ("xn--", "sthree-", "amzn-s3-demo-")
_RESERVED_SUFFIXES = ("-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3")
#: An AWS account ID: exactly 12 digits (AWS Account Management reference, "View AWS account identifiers").
_ACCOUNT = re.compile(r"\d{12}")


def bucket_name_problem(name: object) -> str | None:
    """Why no general purpose S3 bucket can be named ``name``; None when one can."""
    if not isinstance(name, str):
        return f"is a {type(name).__name__}, not a bucket name"
    if name.startswith("arn:") or name.startswith("s3://"):
        return "is an ARN or a URL: pass the bucket's name alone (its bucket_name)"
    if not _BUCKET_NAME.fullmatch(name):
        return "needs 3-63 characters of lowercase letters, numbers, '.' and '-', starting and ending with a " \
               "letter or number"
    if ".." in name or _IP_ADDRESS.fullmatch(name):
        return "has two adjacent periods or is formatted as an IP address"
    if ".-" in name or "-." in name:
        # Each period-separated label starts and ends with a letter or number (the user guide's rules for names
        # with periods, which virtual-hosted-style requests need); aws-cdk's own bucket name check refuses it too.
        return "has a hyphen next to a period: each part between periods must start and end with a letter or number"
    reserved = [p for p in _RESERVED_PREFIXES if name.startswith(p)] + [s for s in _RESERVED_SUFFIXES
                                                                        if name.endswith(s)]
    if reserved:
        return f"uses {reserved[0]!r}, which S3 reserves"
    return None


def check_bucket_name(problems: Problems, label: str, name: object) -> None:
    """Record ``name`` (given as ``label``) unless None, a token, or a name S3 allows for a general purpose bucket."""
    if name is None or is_unresolved(name):
        return
    problem = bucket_name_problem(name)
    problems.check(problem is None, f"{label} {name!r} {problem}: S3 cannot have such a bucket (S3's bucket naming "
                                    "rules); pass the owner's bucket.bucket_name")


def check_account(problems: Problems, label: str, account: object) -> None:
    """Record an ``account`` that is not None, a token, or 12 digits."""
    if account is None or is_unresolved(account):
        return
    problems.check(
        isinstance(account, str) and bool(_ACCOUNT.fullmatch(account)),
        f"{label} {account!r} is not an AWS account ID: pass its 12 digits as a string, e.g. '123456789012'",
    )


def check_name_not_arn(problems: Problems, label: str, name: object, *, what: str) -> None:
    """Record a ``name`` that is an ARN (or not a string) where the resource's name is asked."""
    if name is None or is_unresolved(name):
        return
    problems.check(
        isinstance(name, str) and bool(name.strip()) and not name.startswith("arn:") and ":" not in name,
        f"{label} {name!r} is not a {what} name: pass the name alone, not an ARN",
    )


def check_arn(problems: Problems, label: str, arn: object, *, service: str, resource: str) -> None:
    """Record an ``arn`` that is not None, a token, or an ARN of ``service`` whose resource has ``resource``."""
    if arn is None or is_unresolved(arn):
        return
    parts = arn.split(":", 5) if isinstance(arn, str) else []
    problems.check(
        len(parts) == 6 and parts[0] == "arn" and parts[2] == service and resource in parts[5],
        f"{label} {arn!r} is not a {service} ARN with {resource!r} in it: pass the ARN itself "
        f"(arn:aws:{service}:REGION:ACCOUNT:...{resource}...), not a name",
    )


def check_key(problems: Problems, label: str, key: object) -> None:
    """Record a ``key`` that is not None or a KMS key (``kms.IKey``: a ``Key``, or ``Key.from_key_arn(...)``).

    jsii interfaces are not runtime-checkable protocols, so a key is known by what grants use: its ``key_arn`` and
    its ``grant`` method. A string (an ARN, an alias) fails here, not at the first grant.
    """
    if key is None:
        return
    problems.check(
        not isinstance(key, str) and hasattr(key, "key_arn") and callable(getattr(key, "grant", None)),
        f"{label} {key!r} is not a KMS key (kms.IKey): pass kms.Key.from_key_arn(scope, id, ARN) for a key "
        "defined elsewhere",
    )
