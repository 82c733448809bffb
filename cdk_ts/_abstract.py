"""Abstract base constructs: a subclass that leaves out a member its base needs cannot be instantiated."""

from __future__ import annotations

from abc import ABCMeta

from constructs import Construct


class AbstractConstructMeta(type(Construct), ABCMeta):  # type: ignore[misc]
    """The metaclass of jsii's ``Construct`` joined with ``ABCMeta``, so ``@abstractmethod`` is enforced.

    A subclass missing an abstract member raises ``TypeError`` naming it when instantiated, at synth,
    where a mixin's ``NotImplementedError`` would only fire when the member is first called.
    """
