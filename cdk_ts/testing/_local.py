"""``local_dynamodb``: one call that starts a local engine and the rules proxy in front of it, and stops both."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Literal

from cdk_ts.testing._engines import LocalServer, start_dynalite, start_moto_server
from cdk_ts.testing._proxy import RulesProxy, start_rules_proxy
from cdk_ts.testing._registry import GUESSES, RULES, Rule, rule_named
from cdk_ts.testing._rules import RulesSettings
from cdk_ts.testing._setting_checks import aware_time
from cdk_ts_runtime._errors import ValidationError

Engine = Literal["moto", "dynalite"]


class LocalDynamoDB(RulesProxy):
    """A local DynamoDB that throttles and refuses as DynamoDB does: an engine and the rules proxy in front of it.

    ``endpoint_url`` is where boto3 (or any SDK) connects; ``client()`` gives a boto3 client for it; ``advance``
    moves the proxy's clock (real until a test moves it); ``throttles``/``refusals`` count what it refused.
    ``stop`` ends the proxy and the engine.
    """

    def __init__(self, server: LocalServer, engine: LocalServer, engine_name: Engine) -> None:
        super().__init__(server, engine)
        self.engine_name = engine_name

    def rules_in_force(self) -> list[Rule]:
        """The rules the proxy applies now (the registry's, less ``disabled_rules``)."""
        disabled = set(self.settings.disabled_rules)
        return [rule for rule in RULES if rule.name not in disabled]

    def stop(self) -> None:
        """Stop the proxy and then the engine (safe to call twice)."""
        try:
            super().stop()
        finally:
            self.engine.stop()


def disabled_for(*, guesses: bool, disabled_rules: Iterable[str] = ()) -> list[str]:
    """The ``disabled_rules`` setting for a mode: the guesses unless ``guesses``, plus ``disabled_rules``.

    :param guesses: whether the guesses apply.
    :param disabled_rules: rule names to switch off as well.
        Default: none.
    """
    named = [rule_named(name).name for name in disabled_rules]  # refuses an unknown name, listing the rules
    return sorted(set(named) | (set() if guesses else set(GUESSES)))


def start_local_dynamodb(engine: Engine = "moto", *, guesses: bool = False, disabled_rules: Iterable[str] = (),
                         start_time: datetime | None = None, port: int | None = None,
                         **settings: object) -> LocalDynamoDB:
    """Start ``engine`` and the rules proxy in front of it; the caller stops them (``stop``).

    :param engine: ``"moto"`` or ``"dynalite"``.

        Default: ``"moto"``.
    :param guesses: also apply the rules that are guesses.
        Default: False -- documented rules only.
    :param disabled_rules: names of rules not to apply.
        Default: none.
    :param start_time: a frozen clock from there.
        Default: None -- the real clock until a test moves it.
    :param port: the proxy's port on 127.0.0.1.
        Default: None -- a free one.
    :param settings: ``RulesSettings`` fields (see ``local_dynamodb``).
    """
    if engine not in ("moto", "dynalite"):
        raise ValidationError(f"engine {engine!r} is not one of 'moto' (needs cdk-ts[testing]) or 'dynalite' "
                         "(needs node and `npm install dynalite`)")
    disabled = disabled_for(guesses=guesses, disabled_rules=disabled_rules)
    RulesSettings().updated(**settings)  # every setting checked before anything starts
    if start_time is not None:
        aware_time("start_time", start_time)
    server = start_moto_server() if engine == "moto" else start_dynalite()
    try:
        proxy = start_rules_proxy(server, start_time=start_time, port=port, disabled_rules=disabled, **settings)
    except BaseException:
        server.stop()
        raise
    return LocalDynamoDB(proxy.server, server, engine)


@contextlib.contextmanager
def local_dynamodb(engine: Engine = "moto", *, guesses: bool = False, disabled_rules: Iterable[str] = (),
                   start_time: datetime | None = None, port: int | None = None,
                   **settings: object) -> Iterator[LocalDynamoDB]:
    """A local DynamoDB that throttles and refuses as DynamoDB does, for the ``with`` block; stopped after it.

    ```python
    with local_dynamodb(write_units_per_second=10, update_seconds=60) as ddb:
        client = ddb.client()            # or any SDK with endpoint_url=ddb.endpoint_url
        ...
        ddb.advance(61)                  # the table is ACTIVE again
        assert ddb.throttles(table="readings", reason="TableWriteKeyRangeThroughputExceeded") == 0
    ```

    :param engine: ``"moto"`` (moto_server, ``pip install 'cdk-ts[testing]'``) or ``"dynalite"`` (needs node and
        ``npm install dynalite``). Default: ``"moto"``.
    :param guesses: also apply the rules whose numbers no public source gives (``Rule.guess``).
        Default: False --
        documented rules only.
    :param disabled_rules: names of rules (``RULES``) not to apply.
        Default: none.
    :param start_time: a frozen clock from there.
        Default: None -- the real UTC clock until ``advance``/``set_time``.
    :param port: the proxy's port on 127.0.0.1.
        Default: None -- a free one.
    :param settings: ``RulesSettings`` fields (limits scaled down, CREATING/UPDATING windows...); unknown names
        are refused.
    """
    local = start_local_dynamodb(engine, guesses=guesses, disabled_rules=disabled_rules, start_time=start_time,
                                 port=port, **settings)
    try:
        yield local
    finally:
        local.stop()
