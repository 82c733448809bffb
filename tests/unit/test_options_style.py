"""One options style, aws-cdk's: keyword-only parameters, each typed, with its default in the signature and documented.

Walks every public construct of ``cdk_ts.__all__`` (its constructor and its ``from_*`` importers) and every
options object (the dataclasses of ``cdk_ts.__all__``). Each option must be a keyword-only parameter (after
``scope, construct_id`` for a construct) or a dataclass field, with a ``:param name:`` entry saying
``Default: ...`` when it has a default; where the documented default is a Python expression (``None``,
``True``, ``1000``, ``"dynamodb/"``, ``RemovalPolicy.RETAIN``...), it must equal the signature's. No
``**options: Unpack[...]`` and no bare ``**kwargs`` are left. The typed dicts users may splat
(``RotationOptions``...) must name parameters the constructors take, with the same types.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import typing
from collections.abc import Callable, Iterator

import pytest
from aws_cdk import App, Duration
from constructs import Construct

import cdk_ts
from cdk_ts import ImportedStreamArchiver, StreamArchiver
from cdk_ts._validation import ConstructValidationError, Problems, refuses_unknown_keywords

_PARAM = re.compile(r":param\s+(?:[^:\n]*\s)?(\w+):(.*?)(?=\n\s*:\w[^:\n]*:|\Z)", re.DOTALL)
#: What a ``Default:`` states first: a ``literal``, a number (``65,536``, ``1.3``) or a word (``None``, ``True``).
_DEFAULT = re.compile(
    r"Default:\s*(``(?P<code>.+?)``|(?P<word>\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?|[^\s.;,—]+))", re.DOTALL
)
#: The parameters every construct and importer starts with: not options.
_POSITIONAL = ("self", "cls", "scope", "construct_id")
#: Positional parameters that are not options, by callable, each with its reason.
_NOT_OPTIONS = {
    ("RotatingTimeSeriesTablesBase.__init__", "layout"): "a base's input: its subclass and from_table_prefix pass "
    "the TableLayout they checked; users get one from from_table_prefix, as aws-cdk's TableBaseV2 is never new'd",
}

#: Each typed dict of keywords and the callables whose keyword-only parameters it must name.
TYPED_KEYWORDS = {
    "RotationOptions": ("RotatingTimeSeriesTables.__init__",),
    "PeriodTableOptions": ("RotatingTimeSeriesTables.__init__", "RotatingTimeSeriesTables.from_table_prefix"),
    "TableCapacityOptions": ("DeviceLogTable.__init__", "ShardMetadataTable.__init__"),
    "ArchiveAttributes": ("ImportedStreamArchiver.__init__",),  # StreamArchiver.from_archive_bucket_name is that class
}


def _public(kind: Callable[[type], bool]) -> list[type]:
    return [obj for name in cdk_ts.__all__ if inspect.isclass(obj := getattr(cdk_ts, name)) and kind(obj)]


def constructs() -> list[type]:
    """The constructs users create: public, concrete ``Construct`` subclasses with a constructor of cdk-ts's own."""
    return _public(lambda c: issubclass(c, Construct) and not inspect.isabstract(c) and _ours(c.__init__))


def _ours(function: object) -> bool:
    return getattr(inspect.unwrap(function), "__module__", "").split(".")[0] == "cdk_ts"


def option_callables() -> Iterator[tuple[str, Callable, str]]:
    """``(name, callable, its documentation)`` of every constructor and ``from_*`` importer of a construct."""
    for cls in constructs():
        documentation = f"{vars(cls).get('__doc__') or ''}\n{cls.__init__.__doc__ or ''}"
        yield f"{cls.__name__}.__init__", cls.__init__, documentation
        for name, member in vars(cls).items():
            # an importer that is another construct's class (staticmethod(ImportedStreamArchiver)) is walked as that
            if name.startswith("from_") and isinstance(member, classmethod) and _ours(member.__func__):
                yield f"{cls.__name__}.{name}", getattr(cls, name), member.__func__.__doc__ or ""


def options_objects() -> list[type]:
    """The public dataclasses: the nested options objects (``CompactionOptions``, ``CapacityTier``...)."""
    return _public(dataclasses.is_dataclass)


_READERS = ("from_dict", "from_env", "parse")


def factories() -> list[tuple[str, Callable, str]]:
    """``(name, factory, docstring)`` of each public classmethod of an options object (``CapacityTier.on_demand``).

    ``from_dict``, ``from_env`` and ``parse`` read a serialised object back; they take no options.
    """
    found = []
    for cls in options_objects():
        for name, member in vars(cls).items():
            function = getattr(member, "__func__", None)  # a classmethod, or on_demand's factory-and-flag
            if not name.startswith("_") and function is not None and name not in _READERS:
                found.append((f"{cls.__name__}.{name}", function, function.__doc__ or ""))
    return found


def documented(docstring: str) -> dict[str, str]:
    """Each ``:param name:`` entry of ``docstring``, by name."""
    return dict(_PARAM.findall(docstring))


def style_problems(function: Callable, docstring: str, *, keyword_only: bool = True) -> list[str]:
    """What keeps ``function`` from the one options style, each naming the parameter.

    ``keyword_only=False`` for an options object's factory, whose leading values may be positional
    (``CapacityTier.provisioned(300, 1000)``): its options must still be named, typed and documented.
    """
    problems = []
    entries = documented(docstring)
    for parameter in inspect.signature(function).parameters.values():
        name = parameter.name
        if (function.__qualname__, name) in _NOT_OPTIONS:
            continue
        if parameter.kind is parameter.VAR_KEYWORD:
            problems.append(f"**{name}: options must be keyword-only parameters, not **kwargs (or Unpack[...])")
        elif parameter.kind is parameter.VAR_POSITIONAL:
            problems.append(f"*{name}: options must be keyword-only parameters")
        elif name in _POSITIONAL:
            continue
        elif keyword_only and parameter.kind is not parameter.KEYWORD_ONLY:
            problems.append(f"{name}: must be keyword-only (after *)")
        elif parameter.annotation is parameter.empty:
            problems.append(f"{name}: has no type")
        elif name not in entries:
            problems.append(f"{name}: has no ':param {name}:' entry")
        elif parameter.default is not parameter.empty:
            problems += [f"{name}: {p}" for p in _default_problems(parameter.default, entries[name], function)]
    return problems


def _default_problems(default: object, text: str, function: Callable) -> list[str]:
    match = _DEFAULT.search(text)
    if match is None:
        return ["has a default but its entry states no 'Default: ...'"]
    stated = match.group("code") or match.group("word")
    if re.fullmatch(r"[\d,]+", stated):
        stated = stated.replace(",", "")  # 65,536
    module_globals = inspect.unwrap(function).__globals__
    # ``BillingMode.PAY_PER_REQUEST`` in a module that imports ``aws_dynamodb as dynamodb``: the modules' members too
    members = {k: v for m in module_globals.values() if inspect.ismodule(m) for k, v in vars(m).items()}
    namespace = {**members, **vars(cdk_ts), **module_globals}
    try:
        value = eval(stated, namespace)  # noqa: S307 - our own docstrings: is the stated default the real one?
    except Exception:  # words ("the same tier", "a new bucket"): not comparable
        return []
    return [] if _same(value, default) else [f"documents Default: {stated}, the signature has {default!r}"]


def _same(stated: object, default: object) -> bool:
    if isinstance(stated, Duration) and isinstance(default, Duration):  # jsii objects compare by identity
        return stated.to_seconds() == default.to_seconds()
    # a StrEnum default equals its documented value ("hour"); True == 1 is no match
    return bool(stated == default) and isinstance(stated, bool) == isinstance(default, bool)


def test_the_walk_sees_every_construct_importer_and_options_object():
    assert StreamArchiver.from_archive_bucket_name is ImportedStreamArchiver  # walked as its constructor
    names = {name for name, _function, _doc in option_callables()}
    assert {
        "RotatingTimeSeriesTables.__init__", "RotatingTimeSeriesTables.from_table_prefix", "StreamArchiver.__init__",
        "ImportedStreamArchiver.__init__", "DeviceLogTable.__init__",
        "DeviceLogTable.from_table_name", "ShardMetadataTable.__init__", "TimestreamTable.__init__",
        "IcebergTableSink.__init__", "ArchiveCompaction.__init__", "MonitoringDashboard.__init__",
    } <= names
    assert {"CompactionOptions", "IcebergOptions", "CapacityTier", "StreamConsumer"} <= {
        cls.__name__ for cls in options_objects()
    }
    assert {"CapacityTier.provisioned", "CapacityTier.on_demand"} <= {name for name, _f, _doc in factories()}


@pytest.mark.parametrize(("name", "function", "docstring"), list(option_callables()),
                         ids=[name for name, _f, _doc in option_callables()])
def test_every_construct_and_importer_takes_documented_keyword_only_options(name, function, docstring):
    assert style_problems(function, docstring) == [], name


@pytest.mark.parametrize(("name", "factory", "docstring"), factories(),
                         ids=[name for name, _f, _doc in factories()])
def test_every_options_object_factory_takes_named_documented_options(name, factory, docstring):
    assert style_problems(factory, docstring, keyword_only=False) == [], name


@pytest.mark.parametrize("options", options_objects(), ids=lambda cls: cls.__name__)
def test_every_options_object_is_frozen_with_documented_defaults(options):
    assert options.__dataclass_params__.frozen, f"{options.__name__} must be a frozen dataclass"
    entries = documented(vars(options).get("__doc__") or "")
    problems = []
    for field in dataclasses.fields(options):
        if field.name not in entries:
            problems.append(f"{field.name}: has no ':param {field.name}:' entry")
            continue
        default = field.default_factory() if field.default_factory is not dataclasses.MISSING else field.default
        if default is not dataclasses.MISSING:
            stated = entries[field.name]
            problems += [f"{field.name}: {p}" for p in _default_problems(default, stated, options.__init__)]
    assert problems == [], options.__name__


@pytest.mark.parametrize(("typed_dict", "callables"), TYPED_KEYWORDS.items())
def test_each_typed_dict_of_keywords_names_parameters_the_constructors_take(typed_dict, callables):
    # annotations as written (``from __future__ import annotations``): the typed dict's are ForwardRefs
    hints = getattr(cdk_ts, typed_dict).__annotations__
    keys = {key: getattr(hint, "__forward_arg__", hint) for key, hint in hints.items()}
    callable_of = {name: function for name, function, _doc in option_callables()}
    for name in callables:
        parameters = inspect.signature(callable_of[name]).parameters
        taken = {key: p.annotation for key, p in parameters.items() if key in keys and p.default is not p.empty}
        assert taken == keys, f"{name} must take every key of {typed_dict} as an optional keyword of the same type"


# ---- the checks can fail -------------------------------------------------------------------------


class _Options(typing.TypedDict, total=False):
    size: int


def _unpacked(scope, construct_id, **options: typing.Unpack[_Options]) -> None:
    """:param options: see _Options."""


def _bare(scope, construct_id, *, size: int = 1, **props) -> None:
    """:param size: how big. Default: 1.
    :param props: anything.
    """


def _wrong_default(scope, construct_id, *, size: int = 2, name: str | None = None, mode: str = "a") -> None:
    """:param size: how big. Default: 1.
    :param name: what it is called.
    :param mode: ``"a"`` or ``"b"``. Default: the first mode.
    """


def _positional(scope, construct_id, size: int = 1) -> None:
    """:param size: how big. Default: 1."""


def test_unpacked_and_bare_keyword_options_are_refused():
    assert style_problems(_unpacked, _unpacked.__doc__) == [
        "**options: options must be keyword-only parameters, not **kwargs (or Unpack[...])"
    ]
    assert style_problems(_bare, _bare.__doc__) == [
        "**props: options must be keyword-only parameters, not **kwargs (or Unpack[...])"
    ]


def test_a_missing_or_wrong_default_is_refused_and_words_are_not_compared():
    assert style_problems(_wrong_default, _wrong_default.__doc__) == [
        "size: documents Default: 1, the signature has 2",
        "name: has a default but its entry states no 'Default: ...'",
    ]


def test_a_positional_option_is_refused():
    assert style_problems(_positional, _positional.__doc__) == ["size: must be keyword-only (after *)"]


# ---- a misspelt keyword: the construct's path and the closest name --------------------------------


class _Checked(Construct):
    """Builds first, checks nothing: the decorator itself must refuse the keyword."""

    @refuses_unknown_keywords
    def __init__(self, scope: Construct, construct_id: str, *, size: int = 1, inner: bool = False) -> None:
        """:param size: how big. Default: 1.
        :param inner: create a child that checks its own problems first. Default: False.
        """
        super().__init__(scope, construct_id)
        if inner:
            Problems(self, "Child").raise_if_any()  # another path: must not take this construct's keywords


def test_a_misspelt_keyword_is_refused_with_the_path_even_where_nothing_is_checked():
    root = Construct(App(), "Root")
    expected = r"^Root/C: unknown keyword argument 'sise'; did you mean 'size'\?$"
    with pytest.raises(ConstructValidationError, match=expected):
        _Checked(root, "C", sise=2, inner=True)
    assert _Checked(root, "D", size=2).node.path == "Root/D"
