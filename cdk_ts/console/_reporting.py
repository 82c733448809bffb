"""How every ``cdk-ts`` command turns an error into one line on stderr and an exit code, and finds its Region.

One mapping for all commands (``docs/console.md``'s table): the user's own mistakes (a flag, a setting, an
environment variable, a Region never set) are 2, naming what holds the bad value; a failed AWS call is 3; a
traceback is never shown.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

from cdk_ts.console import EXIT_AWS, EXIT_USAGE, ConsoleError
from cdk_ts_runtime._errors import CdkTsError

#: How a missing Region is set, in the order botocore reads them.
REGION_HELP = (
    "no AWS Region is set: pass --region REGION (e.g. --region eu-west-1), or set AWS_REGION "
    "(or AWS_DEFAULT_REGION), or region= in the AWS_PROFILE's section of ~/.aws/config"
)

#: Variables botocore reads and reports a bad value of without naming them ("Invalid endpoint: not a url").
_AWS_VARIABLES = {
    "endpoint": ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_LAMBDA", "AWS_ENDPOINT_URL_S3"),
    "region": ("AWS_REGION", "AWS_DEFAULT_REGION"),
}


def add_region_flag(parser: argparse.ArgumentParser) -> None:
    """``--region``: the AWS Region of every call the command makes (default: the usual boto3 settings)."""
    parser.add_argument("--region", help="the AWS Region (default: AWS_REGION, AWS_DEFAULT_REGION or the profile's)")


def use_region(region: str | None) -> None:
    """Make ``region`` (``--region``) the Region of every boto3 client made after this; refuse when none is set.

    :raises ConsoleError: when neither ``--region`` nor boto3's own settings give a Region.
    """
    import boto3

    if region is not None and not region.strip():
        raise ConsoleError(f"--region {region!r} names no Region; {REGION_HELP}")
    if region:
        boto3.setup_default_session(region_name=region)
    if not boto3.Session(region_name=region).region_name:
        raise ConsoleError(REGION_HELP)


def reporting_errors(command: str, run: Callable[[], int]) -> int:
    """``run()``'s exit code; an error is one line on stderr and its exit code (2 usage, 3 AWS), never a traceback.

    The user's mistakes are 2: every error cdk-ts raises on purpose (a :class:`CdkTsError`: a bad flag, setting or
    environment variable, named in its message), a ``ValueError``/``KeyError``/``TypeError`` from reading them,
    JSON nested beyond what Python decodes, and botocore's "no Region". A failed AWS call is 3, and so is
    anything unexpected (reported with its type, so it can be told apart).
    """
    from botocore.exceptions import BotoCoreError, ClientError, NoRegionError

    try:
        return run()
    except NoRegionError:
        print(f"cdk-ts {command}: error: {REGION_HELP}", file=sys.stderr)
        return EXIT_USAGE
    except (CdkTsError, ValueError, KeyError, TypeError, RecursionError) as error:
        message = str(error.args[0] if error.args else error)
        print(f"cdk-ts {command}: error: {_with_aws_variables(message)}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        raise  # the reader went away: main ends quietly
    except (BotoCoreError, ClientError) as error:
        print(f"cdk-ts {command}: AWS error: {type(error).__name__}: {_with_aws_variables(str(error))}",
              file=sys.stderr)
        return EXIT_AWS
    except Exception as error:  # noqa: BLE001 - never a traceback; the type tells a bug from AWS
        print(f"cdk-ts {command}: failed: {type(error).__name__}: {error}", file=sys.stderr)
        return EXIT_AWS


def _with_aws_variables(message: str) -> str:
    """``message``, naming the set AWS variables it is about (an endpoint or a Region botocore refused)."""
    named = [
        f"{variable}={os.environ[variable]!r}"
        for word, variables in _AWS_VARIABLES.items() if word in message.lower()
        for variable in variables if variable in os.environ
    ]
    return f"{message} (from the environment: {', '.join(named)})" if named else message
