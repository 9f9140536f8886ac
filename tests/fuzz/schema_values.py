"""A tool's arguments from its JSON Schema, and hostile mutations of them (Hypothesis strategies).

A case is a base (values the schema admits) plus one mutation at one path: a wrong
type, a hostile string (NUL, lone surrogates, confusables, invisible characters,
oversized), a huge or negative number, an extreme date, a duplicated or oversized
list, a removed or unknown member. The mutation says which argument paths a refusal
may name (`acceptable`): its own path, and the paths that held the value it replaced
(renaming `entities[0].name` breaks `facts[2].source`, which named it).

The base comes from hypothesis-jsonschema, kept small, then passes over it add what a
schema cannot say: readable names (so similar names, and entity resolution, happen),
ids the server issued, and members that must name another listed member.
"""

from __future__ import annotations

import copy
import json
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from hypothesis import strategies as st

# Strings a base may use instead of the drawn ones: readable, so similar names (and so
# entity resolution's ambiguity path) really happen.
WORDS = ["default", "Ada", "Lisbon", "billing", "Billing", "retry policy", "Postgres", "Team Blue",
         "Ines", "ines", "api gateway", "API Gateway", "works_at", "owns", "caused", "note"]
# How large a generated oversized string may be: well under the 1 MiB body limit.
BIG = 200_000


class UnsupportedSchema(AssertionError):
    """A schema the suite would silently fuzz less than it asks; extend the suite instead."""


@dataclass(frozen=True)
class PoolRef:
    """An id the server issued earlier in the run, resolved when the case is sent."""

    index: int


@dataclass(frozen=True)
class Step:
    kind: str  # "prop" (a declared member), "key" (a key of a free-form map), "index"
    part: Any


Path = tuple[Step, ...]


def render(path: Path) -> str:
    """The product's spelling of a path: `facts[0].valid_at`, `entity_resolutions['X']`;
    a member whose name is not a plain name is bracketed too (`['top k']`, `['']`)."""
    out = ""
    for step in path:
        if step.kind == "index":
            out += f"[{step.part}]"
        elif step.kind == "key" or not str(step.part).isidentifier():
            out += f"[{str(step.part)!r}]"
        else:
            out += f".{step.part}" if out else str(step.part)
    return out


@dataclass
class Mutation:
    kind: str
    path: Path
    description: str
    # Refusals must name one of these, or a prefix or an extension of one.
    acceptable: list[str] = field(default_factory=list)
    # False when the mutated arguments may be refused for a rule JSON Schema cannot state
    # (a valid value swapped in, an optional member removed): then any real field will do.
    strict: bool = True
    # True when the change makes the body itself unacceptable (nested past any sane depth,
    # NaN or Infinity, which are not JSON): then the refusal may name `body`.
    body_level: bool = False


@dataclass
class Case:
    base: Any
    mutated: Any
    mutation: Mutation

    def __repr__(self) -> str:  # the failure report notes the arguments themselves
        return f"<{self.mutation.kind}: {self.mutation.description}>"


# ---------------------------------------------------------------------------- schemas


# Keywords holding schemas that the walks here (sites, the passes over a base) do not follow.
UNWALKED = {"$ref", "allOf", "not", "if", "then", "else", "prefixItems", "contains",
            "patternProperties", "propertyNames", "dependentSchemas", "unevaluatedItems",
            "unevaluatedProperties"}


def check_supported(schema: dict[str, Any], where: str = "") -> None:
    """Fail loudly where the suite would silently fuzz less than the schema asks: members
    behind a keyword the mutations never reach, or a format hypothesis-jsonschema ignores
    (it would send any text, and the base would never be accepted)."""
    unwalked = set(schema) & UNWALKED
    if unwalked:
        raise UnsupportedSchema(f"schema at {where or 'the root'} uses {sorted(unwalked)}; "
                                "teach tests/fuzz/schema_values.py to walk it")
    if "format" in schema and schema["format"] not in LIBRARY_FORMATS | set(FORMATS):
        raise UnsupportedSchema(f"schema at {where or 'the root'} has format "
                                f"{schema['format']!r}; add it to LIBRARY_FORMATS or FORMATS "
                                "in tests/fuzz/schema_values.py")
    for branch in schema.get("anyOf", []) + schema.get("oneOf", []):
        check_supported(branch, where)
    for name, sub in schema.get("properties", {}).items():
        check_supported(sub, f"{where}.{name}" if where else name)
    if isinstance(schema.get("items"), dict):
        check_supported(schema["items"], f"{where}[]")
    if isinstance(schema.get("additionalProperties"), dict):
        check_supported(schema["additionalProperties"], f"{where}[*]")


def types_of(schema: dict[str, Any]) -> set[str]:
    if "anyOf" in schema or "oneOf" in schema:
        return set().union(*(types_of(b) for b in schema.get("anyOf", schema.get("oneOf", []))))
    if "enum" in schema:
        return {json_type(v) for v in schema["enum"]}
    if "const" in schema:
        return {json_type(schema["const"])}
    kind = schema.get("type")
    if kind is None:
        return {"null", "boolean", "integer", "number", "string", "array", "object"}
    return set(kind) if isinstance(kind, list) else {kind}


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str | PoolRef):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def branch_for(schema: dict[str, Any], value: Any) -> dict[str, Any]:
    """The anyOf branch that describes `value` (a datetime string, not the null branch)."""
    branches = schema.get("anyOf") or schema.get("oneOf")
    if not branches:
        return schema
    kind = json_type(value)
    for branch in branches:
        if kind in types_of(branch) or (kind == "integer" and "number" in types_of(branch)):
            return branch_for(branch, value)
    return branches[0]


def schema_paths(schema: dict[str, Any], prefix: str = "") -> Iterator[str]:
    """Every argument path the schema declares, lists as `[]` and free-form keys as `[*]`."""
    for branch in schema.get("anyOf", []) + schema.get("oneOf", []):
        yield from schema_paths(branch, prefix)
    for name, sub in schema.get("properties", {}).items():
        path = f"{prefix}.{name}" if prefix else name
        yield path
        yield from schema_paths(sub, path)
    if isinstance(schema.get("items"), dict):
        yield f"{prefix}[]"
        yield from schema_paths(schema["items"], f"{prefix}[]")
    if isinstance(schema.get("additionalProperties"), dict):
        yield f"{prefix}[*]"
        yield from schema_paths(schema["additionalProperties"], f"{prefix}[*]")


_INDEX = re.compile(r"\[\d+\]")
_KEY = re.compile(r"""\[(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")\]""", re.S)


def shape(path: str) -> str:
    """A rendered path with its indexes and keys blanked, to compare with schema_paths."""
    return _INDEX.sub("[]", _KEY.sub("[*]", path))


def value_paths(value: Any, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    """Every node of an arguments value with its path (map keys as their own nodes)."""
    yield path, value
    if isinstance(value, dict):
        for key, sub in value.items():
            yield from value_paths(sub, (*path, Step("prop", key)))
    elif isinstance(value, list):
        for index, sub in enumerate(value):
            yield from value_paths(sub, (*path, Step("index", index)))


def rendered_paths(value: Any) -> Iterator[str]:
    for path, node in value_paths(value):
        yield render(path)
        if isinstance(node, dict):
            yield from (render((*path, Step("key", k))) for k in node)


def field_matches(reported: str, acceptable: str) -> bool:
    """Equal, or one is a path prefix of the other (`facts[0]` vs `facts[0].source`)."""
    if reported == acceptable:
        return True
    longer, shorter = (reported, acceptable) if len(reported) > len(acceptable) \
        else (acceptable, reported)
    return bool(shorter) and longer.startswith(shorter) and longer[len(shorter)] in ".["


# ------------------------------------------------------------------- valid values

# A base stays small (growing it is what the mutations do): lists of at most 4 items,
# strings of at most 40 characters, at most 3 keys in a free-form map.
BASE_ITEMS, BASE_CHARS, BASE_KEYS = 4, 40, 3
# Formats hypothesis-jsonschema generates (RFC 3339 date-times), and strategies for those
# it ignores (it would send any text): a format in neither fails check_supported.
LIBRARY_FORMATS = {"date-time"}
FORMATS = {"uuid": st.uuids().map(str)}

_VALID: dict[str, st.SearchStrategy[Any]] = {}


def valid(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values the schema admits (JSON Schema cannot say everything the tool requires):
    hypothesis-jsonschema's, some strings made readable and some ids issued ones.

    Built once per schema: building strategies costs more than drawing. No NUL in a base:
    the database cannot hold it, and the mutations send it.
    """
    # Imported here: importing it reads Hypothesis's Unicode tables, which Hypothesis warns
    # against while conftest files load (and tests/fuzz/conftest.py imports this module).
    from hypothesis_jsonschema import from_schema

    key = json.dumps(schema, sort_keys=True)
    if key not in _VALID:
        # Lists mostly not empty: an empty list of entities stores nothing worth checking.
        drawn = st.one_of([from_schema(_small(schema, least), custom_formats=FORMATS,
                                       allow_x00=False) for least in (1, 0)])
        _VALID[key] = _readable(schema, drawn)
    return _VALID[key]


def _small(schema: dict[str, Any], least: int) -> dict[str, Any]:
    """A copy of `schema` with the base's bounds on lists (at least `least` items where the
    schema allows), plain strings and free-form maps."""
    schema = copy.deepcopy(schema)

    def tighten(node: dict[str, Any]) -> None:
        if _plain_string(node) and node.get("minLength", 0) <= BASE_CHARS:
            node["maxLength"] = min(node.get("maxLength", BASE_CHARS), BASE_CHARS)
        if "array" in types_of(node) and node.get("minItems", 0) <= BASE_ITEMS:
            node["maxItems"] = min(node.get("maxItems", BASE_ITEMS), BASE_ITEMS)
            node["minItems"] = min(max(node.get("minItems", 0), least), node["maxItems"])
        if isinstance(node.get("additionalProperties"), dict):
            node["maxProperties"] = len(node.get("properties", {})) + BASE_KEYS
        for sub in [*node.get("anyOf", []), *node.get("oneOf", []),
                    *node.get("properties", {}).values(), node.get("items"),
                    node.get("additionalProperties")]:
            if isinstance(sub, dict):
                tighten(sub)

    tighten(schema)
    return schema


def _plain_string(schema: dict[str, Any]) -> bool:
    return (schema.get("type") == "string" and not {"format", "pattern", "enum", "const"}
            & set(schema))


@cache
def words(max_size: int = BASE_CHARS) -> st.SearchStrategy[str]:
    """Readable strings of 1 to 20 characters that survive whitespace stripping."""
    simple = st.from_regex(r"[A-Za-z0-9]([A-Za-z0-9 _.-]{0,18}[A-Za-z0-9])?", fullmatch=True)
    return st.one_of(st.sampled_from(WORDS), simple).filter(lambda s: len(s) <= max_size)


@st.composite
def _readable(draw, schema: dict[str, Any], drawn: st.SearchStrategy[Any]) -> Any:
    """A value from `drawn` with, at random, plain strings (and the keys of free-form maps)
    replaced by readable words, and ids by ones the server issued (`PoolRef`)."""

    def walk(node_schema: dict[str, Any], node: Any) -> Any:
        node_schema = branch_for(node_schema, node)
        if isinstance(node, str):
            if node_schema.get("format") == "uuid" and draw(st.booleans()):
                return PoolRef(draw(st.integers(0, 1 << 16)))
            if (_plain_string(node_schema) and node_schema.get("minLength", 0) <= 1
                    and draw(st.booleans())):
                return draw(words(node_schema.get("maxLength", BASE_CHARS)))
            return node
        if isinstance(node, list) and isinstance(node_schema.get("items"), dict):
            return [walk(node_schema["items"], item) for item in node]
        if isinstance(node, dict):
            properties = node_schema.get("properties", {})
            extra = node_schema.get("additionalProperties")
            out = {}
            for key, sub in node.items():
                if key in properties:
                    out[key] = walk(properties[key], sub)
                elif isinstance(extra, dict):
                    out.setdefault(draw(words()) if draw(st.booleans()) else key,
                                   walk(extra, sub))
                else:
                    out[key] = sub
            return out
        return node

    return walk(schema, draw(drawn))


# ------------------------------------------------------ cross-references, generically

_REFERENCE = re.compile(r"one of `([A-Za-z_][\w]*)\[\]\.([A-Za-z_]\w*)`")


def link_references(schema: dict[str, Any], value: Any, pick) -> Any:
    """Point members documented as "Must equal one of `X[].y`" at values that exist.

    JSON Schema cannot say that a fact's source must be a listed entity; the tools'
    descriptions do, in this one phrasing, so a base can honour it for any tool that
    documents a reference the same way. `pick(options)` chooses among the candidates.
    """
    if not isinstance(value, dict):
        return value
    root = value

    def walk(node_schema: dict[str, Any], node: Any) -> None:
        node_schema = branch_for(node_schema, node)
        if isinstance(node, dict):
            for name, sub in node_schema.get("properties", {}).items():
                if name not in node:
                    continue
                match = _REFERENCE.search(sub.get("description", ""))
                if match and isinstance(node[name], str):
                    listed, member = match.groups()
                    options = [item[member] for item in root.get(listed, [])
                               if isinstance(item, dict) and isinstance(item.get(member), str)]
                    if options:
                        node[name] = pick(options)
                walk(sub, node[name])
        elif isinstance(node, list) and isinstance(node_schema.get("items"), dict):
            for item in node:
                walk(node_schema["items"], item)

    walk(schema, root)
    return root


# ----------------------------------------------------------------- hostile values

# Latin letters and their Cyrillic look-alikes (and the Kelvin sign), which NFKC keeps apart.
CONFUSABLE = str.maketrans(dict(zip("aeopcxABEKis", "\u0430\u0435\u043e\u0440\u0441\u0445"
                                    "\u0410\u0412\u0415\u212a\u0456\u0455", strict=True)))
FULLWIDTH = {chr(c): chr(c + 0xFEE0) for c in range(0x21, 0x7F)}
INVISIBLE = ["\u200b", "\u200d", "\ufeff", "\u2060", "\u202e", "\u2066", "\u00ad", "\u034f"]
WHITESPACE_ONLY = [" ", "   ", "\t\n", "\u00a0", "\u3000", "\u2028", "\u0085", "\x1c\x1d",
                   " \u200b "]
CONTROL = ["\x01", "\x07", "\x1b[31m", "\x7f", "\r\n", "\x08"]
# NFKC or casefold lengthen these many times over: ﷺ is 18 characters after NFKC.
EXPANDING = ["\ufdfa", "\u3300", "ß", "\ufb03", "\u2475", "İ"]
ODD = ["' OR 1=1 --", "%s%n%x", "{{7*7}}", "${jndi:ldap://x}", "../../etc/passwd",
       "<script>alert(1)</script>", "\\", '"', "null", "NaN", "0", "-1", "true",
       "\U0010ffff", "\ufffe", "\uffff", "\ue000", "👨‍👩‍👧‍👦", "🇵🇹", "e\u0301", "é",
       "Ⅸ", "㎏", "ǅ", "\u0130stanbul", "Ⅻ" * 3]
DATES = [
    "9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00", "2024-01-01T00:00:00+16:00",
    "9999-12-31T23:59:59.999999Z",
    "0001-01-01T00:00:00", "0001-01-01T00:00:00Z", "0001-01-01T00:00:00-14:00",
    "9999-12-31T23:59:59+14:00", "2024-02-30T00:00:00Z", "2023-02-29T12:00:00",
    "2024-01-01T24:00:00Z", "2024-06-30T23:59:60Z", "2024-01-01T00:00:00+24:00",
    "2024-01-01T00:00:00+14:01", "2024-01-01T00:00:00-23:59", "+10000-01-01T00:00:00Z",
    "2024-01-01T00:00:00+15:59", "0499-01-08T17:01:56.5+23:44",
    "2024-01-01T00:00:00-16:00", "9999-12-31T00:00:00+23:59", "0001-01-01T00:00:00-23:59",
    "-0001-01-01T00:00:00Z", "0000-01-01T00:00:00Z", "2024-W01-1", "2024-001", "now", "",
    "2024-01-01", "2024-01-01 00:00:00", "20240101T000000Z", "1970-01-01T00:00:00.0000000001Z",
    "2024-01-01T00:00:00+00:00[Europe/Lisbon]", "2024-01-01T00:00:00\x00Z",
    "\uff12\uff10\uff12\uff14-01-01",
]
NUMBERS = [0, -1, 2**31, 2**53 + 1, 2**63 - 1, 2**63, 2**64, -(2**63) - 1, 10**30, -(10**30),
           10**400, 1.5, 1.0, -0.0, 1e308, -1e308, 5e-324, float("nan"), float("inf"),
           float("-inf"), "10", "1e3", " 5 ", "0x10", True]
UUIDS = ["00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff",
         "not-a-uuid", "", "00000000-0000-0000-0000-00000000000", "0" * 33, "{%s}", "urn:uuid:%s",
         "%s\x00", "%s ", "%s-extra"]
WRONG_TYPES = {"null": None, "boolean": False, "integer": 7, "number": 2.5, "string": "x",
               "array": [], "object": {}}


def hostile_strings(current: str, schema: dict[str, Any]) -> st.SearchStrategy[tuple[str, str]]:
    return st.one_of(string_options(current, schema))


def string_options(current: str, schema: dict[str, Any]) -> list[st.SearchStrategy]:
    limit = schema.get("maxLength")
    base = current or "x"
    confusable = base.translate(CONFUSABLE)
    fullwidth = "".join(FULLWIDTH.get(c, c) for c in base)
    oversized = [BIG, 10_000] + ([limit + 1, limit * 10] if limit else [4001, 100_000])
    options = [
        st.sampled_from([base + "\x00", "\x00" + base, "\x00", base[:1] + "\x00" + base[1:]])
        .map(lambda s: ("nul", s)),
        st.sampled_from([base + "\ud800", "\udfff", "\ud83d", "\ude00" + base, "a\udc80b"])
        .map(lambda s: ("lone_surrogate", s)),
        st.sampled_from([confusable, fullwidth, base.upper(), base.casefold(),
                         f" {base} ", base + base[-1:]]).map(lambda s: ("confusable", s)),
        st.sampled_from(INVISIBLE).map(lambda c: ("invisible", base + c)),
        st.sampled_from(INVISIBLE + WHITESPACE_ONLY).map(lambda s: ("whitespace_only", s)),
        st.sampled_from(CONTROL).map(lambda c: ("control", base + c)),
        st.tuples(st.sampled_from(EXPANDING), st.sampled_from(sorted({limit or 500, 1, 100})))
        .map(lambda p: ("expands_when_normalized", p[0] * p[1])),
        st.tuples(st.sampled_from(["x", "é", "😀", "\ufdfa"]), st.sampled_from(oversized))
        .map(lambda p: ("oversized", p[0] * (p[1] if p[0] == "x" else max(1, p[1] // 4)))),
        st.sampled_from(ODD).map(lambda s: ("odd_text", s)),
        st.just(("empty", "")),
    ]
    if limit:
        options.append(st.just(("boundary", "y" * limit)))
    return options


def branches(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The alternatives of a schema, anyOf/oneOf flattened (a schema without any is its own)."""
    inner = schema.get("anyOf") or schema.get("oneOf")
    return [leaf for branch in inner for leaf in branches(branch)] if inner else [schema]


def hostile_for(schema: dict[str, Any], current: Any) -> st.SearchStrategy[tuple[str, Any]]:
    return st.one_of(hostile_options(schema, current))


def hostile_options(schema: dict[str, Any], current: Any) -> list[st.SearchStrategy]:
    """Strategies of (kind, value) replacements for a node of `schema` holding `current`.

    Every alternative of the schema contributes its own hostile values, so an absent
    optional date (`datetime | None`, currently null) still gets extreme dates.
    """
    kinds = types_of(schema)
    options = []
    text = current if isinstance(current, str) else ""
    for node in branches(schema):
        node_kinds = types_of(node)
        if "enum" in node:
            near = [variant for v in node["enum"] if isinstance(v, str) for variant in
                    (v.upper(), f" {v}", v + "\x00", v.translate(CONFUSABLE), v + "s", v[:-1])]
            if near:
                options.append(st.sampled_from(near).map(lambda v: ("near_enum", v)))
            options.append(st.sampled_from(node["enum"]).map(lambda v: ("valid_value", v)))
        elif node.get("format") == "date-time":  # weighted: where databases differ most
            options += [st.sampled_from(DATES[i::3]).map(lambda d: ("extreme_date", d))
                        for i in range(3)]
            options.append(st.sampled_from([0, -62135596800, 253402300799, 253402300800,
                                            10**20, -(10**20), 1.5e9])
                           .map(lambda n: ("epoch_number", n)))
        elif node.get("format") == "uuid":
            options.append(st.tuples(st.sampled_from(UUIDS), st.uuids()).map(
                lambda p: ("malformed_uuid", p[0] % p[1] if "%s" in p[0] else p[0])))
            options.append(st.uuids().map(lambda u: ("uppercase_uuid", str(u).upper())))
        elif "string" in node_kinds:
            options += string_options(text, node)
        if node_kinds & {"integer", "number"}:
            low, high = node.get("minimum"), node.get("maximum")
            edges = [v for v in (low, high) if v is not None]
            outside = [v - 1 for v in edges[:1]] + [v + 1 for v in edges[1:]]
            options.append(st.sampled_from(NUMBERS + outside).map(lambda n: ("bad_number", n)))
            if edges:
                options.append(st.sampled_from(edges).map(lambda n: ("boundary", n)))
        if "boolean" in node_kinds:
            options.append(st.sampled_from(["true", 1, 0, "yes", None])
                           .map(lambda v: ("bad_bool", v)))
            options.append(st.booleans().map(lambda v: ("valid_value", v)))
    # The same for every node (one plan, so that they do not crowd out the telling ones).
    others = [t for t in WRONG_TYPES if t not in kinds and not (t == "integer" and "number" in
                                                                 kinds)]
    generic = [st.sampled_from([[current], {"value": current}, [[[current]]]])
               .map(lambda v: ("wrapped", v)),
               st.sampled_from([60, 2000, 20_000]).map(lambda d: ("nested", Nested(d)))]
    if others:
        generic.insert(0, st.sampled_from(others).map(lambda t: ("wrong_type", WRONG_TYPES[t])))
    options.append(st.one_of(generic))
    return options


@dataclass(frozen=True)
class Nested:
    """`depth` arrays inside each other around a string: written out by the client's encoder
    (Python's own json module would recurse too deep to send it)."""

    depth: int


UNKNOWN_KEYS = ["unknown", "Scope", "scope ", "\u0455cope", "__proto__", "constructor", "",
                "scope\x00", "\ud800", "a" * 300, "$ref", "facts[0]", "query.", "x" * 5000]


# ---------------------------------------------------------------------- mutations


@dataclass
class Site:
    path: Path
    schema: dict[str, Any]
    value: Any
    present: bool = True
    required: bool = False
    is_key: bool = False  # a key of a free-form map (the value is the key itself)


def sites(schema: dict[str, Any], value: Any, path: Path = (),
          required: bool = True) -> Iterator[Site]:
    yield Site(path, schema, value, required=required)
    node = branch_for(schema, value)
    if isinstance(value, dict):
        properties = node.get("properties", {})
        needed = set(node.get("required", []))
        extra = node.get("additionalProperties")
        for name, sub in properties.items():
            step = (*path, Step("prop", name))
            if name in value:
                yield from sites(sub, value[name], step, name in needed)
            else:
                yield Site(step, sub, None, present=False, required=name in needed)
        if isinstance(extra, dict):
            for key, sub in value.items():
                if key in properties:
                    continue
                step = (*path, Step("key", key))
                yield Site(step, {"type": "string"}, key, is_key=True)
                yield from sites(extra, sub, step, False)
    elif isinstance(value, list) and isinstance(node.get("items"), dict):
        for index, item in enumerate(value):
            yield from sites(node["items"], item, (*path, Step("index", index)), True)


def _get(value: Any, path: Path) -> Any:
    for step in path:
        value = value[step.part]
    return value


def _parent(value: Any, path: Path) -> tuple[Any, Step]:
    return _get(value, path[:-1]), path[-1]


def _strings(value: Any) -> set[str]:
    if isinstance(value, str):
        return {value} if value else set()
    if isinstance(value, dict):
        return set().union(set(), *(_strings(k) | _strings(v) for k, v in value.items()))
    if isinstance(value, list):
        return set().union(set(), *(_strings(v) for v in value))
    return set()


def relatives(mutated: Any, values: set[str]) -> list[str]:
    """Paths whose value (or map key) is one of `values`: a change there may be reported there."""
    out = []
    for path, node in value_paths(mutated):
        if isinstance(node, str) and node in values:
            out.append(render(path))
        if isinstance(node, dict):
            out.extend(render((*path, Step("key", k))) for k in node if k in values)
    return out


@st.composite
def cases(draw, schema: dict[str, Any]) -> Case:
    """A base drawn from `schema`, then one mutation of it."""
    # Which plan to apply is drawn first: choices drawn after the base crowd onto their
    # first alternative (Hypothesis's generation favours it), drawn first they spread out.
    pick = draw(st.integers(0, 2**32 - 1))
    base = draw(valid(schema))
    base = link_references(schema, base, lambda options: draw(st.sampled_from(options)))
    mutated = copy.deepcopy(base)
    # One flat list of (site, move, values) plans, so that every one is as likely.
    plans: list[tuple[Site, str, Any]] = []
    every = list(sites(schema, base))
    for site in every[1:] + every[:1]:  # the whole object last: the least telling
        if site.is_key:
            plans.append((site, "rename_key", None))
            continue
        plans += [(site, "replace", option) for option in
                  hostile_options(site.schema, site.value if site.present else None)]
        if site.path and site.present:
            plans.append((site, "delete", None))
        if isinstance(site.value, dict) and site.present:
            plans.append((site, "unknown_member", None))
        if isinstance(site.value, list) and site.present:
            # Weighted: a list has one site but these are its telling faults.
            plans += [(site, "oversize", None)] * 2 + [(site, "duplicate", None)] * (
                4 if site.value else 0)
    site, move, values = plans[pick % len(plans)]
    where = render(site.path)
    container = branch_for(site.schema, site.value)
    old = site.value if site.present else None

    if move == "rename_key":
        kind, new_key = draw(hostile_strings(site.value, {}))
        parent, step = _parent(mutated, site.path)
        parent[new_key] = parent.pop(step.part)
        map_path = render(site.path[:-1])
        mutation = Mutation(f"key_{kind}", site.path, f"key {step.part!r} renamed to {new_key!r}",
                            [map_path])
        mutation.acceptable += relatives(mutated, {site.value})
        return Case(base, mutated, mutation)

    if move == "delete":
        parent, step = _parent(mutated, site.path)
        del parent[step.part]
        mutation = Mutation("delete_required" if site.required else "delete_optional",
                            site.path, f"removed {where}", [where],
                            strict=site.required)
        if isinstance(parent, list):  # later items moved down by one
            mutation.acceptable = [render(site.path[:-1])]
    elif move == "unknown_member":
        key = draw(st.sampled_from(UNKNOWN_KEYS).filter(lambda k: k not in site.value))
        _, extra_value = draw(st.one_of(st.just(("valid", "x")), hostile_for({}, "x")))
        _get(mutated, site.path)[key] = extra_value
        # In a free-form map (entity_resolutions) the new member is a key, named in brackets.
        is_map = isinstance(container.get("additionalProperties"), dict)
        added = (*site.path, Step("key" if is_map else "prop", key))
        mutation = Mutation("unknown_member", added, f"added unknown member {key!r}",
                            [render(added)])
    elif move == "duplicate":
        items = _get(mutated, site.path)
        source = draw(st.integers(0, len(items) - 1))
        target = draw(st.integers(0, len(items)))
        items.insert(target, copy.deepcopy(items[source]))
        shifted = source + 1 if target <= source else source
        mutation = Mutation("duplicate", (*site.path, Step("index", target)),
                            f"{where}[{source}] listed again at [{target}]",
                            [f"{where}[{target}]", f"{where}[{shifted}]"])
        mutation.acceptable += [where] if "maxItems" in container else []
    elif move == "oversize":
        items = _get(mutated, site.path)
        limit = container.get("maxItems", 1000)
        filler = items or [draw(valid(container.get("items", {})))]
        distinct = draw(st.booleans())
        grown = [_numbered(filler[i % len(filler)], i) if distinct else
                 copy.deepcopy(filler[i % len(filler)]) for i in range(limit + 1)]
        items[:] = grown
        mutation = Mutation("oversized_list", site.path, f"{where} grown to {len(grown)} items",
                            [where])
    else:
        kind, new = draw(values)
        if site.path:
            parent, step = _parent(mutated, site.path)
            parent[step.part] = new
        else:
            mutated = new
        # Replacing the whole arguments object may be refused by any member it lacks.
        mutation = Mutation(kind, site.path, f"{where or 'arguments'} := {_short(new)}",
                            [where] if where else [], strict=bool(where) and kind != "valid_value")
        if isinstance(mutated, dict):  # a value that now clashes with another's is named there
            mutation.acceptable += relatives(mutated, _strings(new) - _strings(old))
    if isinstance(mutated, dict):
        mutation.acceptable += relatives(mutated, _strings(old))
    mutation.body_level = _not_plain_json(mutated)
    return Case(base, mutated, mutation)


def _not_plain_json(value: Any) -> bool:
    if isinstance(value, Nested):
        return True
    if isinstance(value, float):
        return value != value or value in (float("inf"), float("-inf"))
    if isinstance(value, dict):
        return any(_not_plain_json(v) for v in value.values())
    if isinstance(value, list):
        return any(_not_plain_json(v) for v in value)
    return False


def _numbered(value: Any, index: int) -> Any:
    if isinstance(value, str):
        return f"{value} {index}"
    if isinstance(value, dict):
        return {k: _numbered(v, index) for k, v in value.items()}
    if isinstance(value, list):
        return [_numbered(v, index) for v in value]
    return value


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:60]}... ({len(text)} chars)"


def resolve(value: Any, pool: list[str]) -> Any:
    """Replace PoolRef placeholders with ids the server issued (a fresh id if none yet)."""
    if isinstance(value, PoolRef):
        return pool[value.index % len(pool)] if pool else str(uuid.UUID(int=value.index))
    if isinstance(value, dict):
        return {resolve(k, pool): resolve(v, pool) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, pool) for v in value]
    return value
