"""One error hierarchy: every error cdk-ts raises on purpose is a :class:`CdkTsError`.

Each keeps the built-in base it had (``ValueError``, ``KeyError``, ``TypeError``, ``LookupError``,
``RuntimeError``), so code that caught those still does; ``except CdkTsError`` catches all of them. The
construct side's synth-time error (``cdk_ts.ConstructValidationError``) is one too. A renamed error's old
name is in the one registry of deprecations (``cdk_ts_runtime._deprecations``).
"""

from __future__ import annotations


class CdkTsError(Exception):
    """Base of every error cdk-ts raises on purpose (construct side and runtime side)."""


class ValidationError(CdkTsError, ValueError):
    """A value cdk-ts refuses (a setting, an argument, an item); the message names it and the way out."""


class EnvironmentVariableMissingError(CdkTsError, KeyError):
    """A ``from_env`` found no value for a variable it needs; the message names it and what sets it (``bind``).

    A ``KeyError`` too, as the missing variable was before; its text is the message itself, not its repr.
    """

    def __init__(self, message: str, *names: str) -> None:
        """An error for the variables ``names``.

        :param message: what is missing and the way out.
        :param names: the variables that are not set.
        """
        super().__init__(message)
        self.names = names

    def __str__(self) -> str:
        return str(self.args[0])


class WrongTypeError(CdkTsError, TypeError):
    """A value of a kind cdk-ts cannot use there (a construct, a function, a table); the message names both."""


class UnknownKeywordError(CdkTsError, TypeError):
    """A keyword argument a function does not take; the message names the closest one it does."""


class MissingClientError(CdkTsError, RuntimeError):
    """A call needs a boto3 client the object was built without; the message names the argument to pass."""
