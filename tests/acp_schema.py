"""Validate recorded JSON-RPC traffic against the ACP schema (`references/acp-schema/`), strictly.

The published schema leaves most objects open (no `additionalProperties: false`), so a custom
field at the root of a spec type would pass it. ACP forbids such fields ("extras go in `_meta`"),
so `StrictSchema` closes every value whose type lists its properties (`unevaluatedProperties:
false` on its outermost schema): a field the schema does not name is an error.

Each message is checked against the type of its method and direction (`x-method`, `x-side`): a
request's params, a notification's params, a response's result by the method of the request it
answers. Extension methods (`_`-prefixed) are not the schema's and are skipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from jsonschema import Draft202012Validator

SCHEMA_DIR = Path(__file__).resolve().parents[1] / "references" / "acp-schema"

Direction = Literal["sent", "received"]
"""As the test client saw it: `sent` by the client to the agent, `received` from the agent."""


_COMPOSITIONS = ("allOf", "anyOf", "oneOf")
_INSTANCES = ("items", "additionalProperties", "contains", "not")
"""Keywords whose schemas describe another value (a new instance), or the same value again."""


class _Closer:
    """Closed and open versions of every definition.

    A schema is closed (`unevaluatedProperties: false`) where it is the outermost schema of a value:
    the root, a property's value, an item. Inside `allOf` / `anyOf` / `oneOf` (the same value,
    described in parts) it stays open; the outer schema's `unevaluatedProperties` sees what every
    part that matched has named, which is exactly "no field the schema does not know".
    """

    def __init__(self, defs: dict[str, Any]) -> None:
        self.defs = defs
        self._objecty: dict[str, bool] = {}

    def objecty(self, node: Any, seen: frozenset[str] = frozenset()) -> bool:
        """True when `node` (with its references) names properties: it is a spec type with fields."""
        if not isinstance(node, dict):
            return False
        if "properties" in node:
            return True
        ref = node.get("$ref")
        if isinstance(ref, str):
            name = ref.removeprefix("#/$defs/")
            if name in seen:
                return False
            if name not in self._objecty:
                self._objecty[name] = self.objecty(self.defs.get(name), seen | {name})
            return self._objecty[name]
        return any(self.objecty(b, seen) for key in _COMPOSITIONS for b in node.get(key) or [])

    def transform(self, node: Any, *, outermost: bool) -> Any:
        if isinstance(node, list):
            return [self.transform(v, outermost=outermost) for v in node]
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                out[key] = {k: self.transform(v, outermost=True) for k, v in value.items()}
            elif key in _INSTANCES and isinstance(value, dict):
                out[key] = self.transform(value, outermost=True)
            elif key in _COMPOSITIONS and isinstance(value, list):
                out[key] = [self.transform(v, outermost=False) for v in value]
            elif key == "$ref" and isinstance(value, str):
                out[key] = value + ("__closed" if outermost else "__open")
            else:
                out[key] = value
        if (
            outermost
            and "additionalProperties" not in node
            and "unevaluatedProperties" not in node
            and self.objecty(node)
        ):
            out["unevaluatedProperties"] = False
        return out


@dataclass(frozen=True)
class Problem:
    """One message that does not follow the schema."""

    direction: Direction
    message: dict[str, Any]
    type_name: str
    errors: list[str]

    def __str__(self) -> str:
        shown = json.dumps(self.message)[:600]
        return f"{self.direction} {self.type_name}: {'; '.join(self.errors[:3])}\n    {shown}"


class StrictSchema:
    """One ACP schema file, closed to unknown fields, with a validator per type."""

    def __init__(self, name: str = "schema.json") -> None:
        raw = json.loads((SCHEMA_DIR / name).read_text())
        self.name = name
        defs: dict[str, Any] = raw["$defs"]
        closer = _Closer(defs)
        strict: dict[str, Any] = {}
        for type_name, schema in defs.items():
            strict[type_name + "__closed"] = closer.transform(schema, outermost=True)
            strict[type_name + "__open"] = closer.transform(schema, outermost=False)
        self._root = {"$schema": raw["$schema"], "$defs": strict}
        self.defs = defs
        self._validators: dict[str, Draft202012Validator] = {}
        self._by_method: dict[tuple[str, str, str], str] = {}
        for type_name, schema in defs.items():
            method, side = schema.get("x-method"), schema.get("x-side")
            if isinstance(method, str) and isinstance(side, str):
                kind = next((k for k in ("Request", "Response", "Notification") if type_name.endswith(k)), None)
                if kind is not None:
                    self._by_method.setdefault((method, side, kind), type_name)

    def type_for(self, method: str, side: str, kind: str) -> str | None:
        """The definition for `method`'s params (`Request`, `Notification`) or result (`Response`)."""
        return self._by_method.get((method, side, kind)) or self._by_method.get((method, "both", kind))

    def errors(self, type_name: str, value: Any) -> list[str]:
        """What is wrong with `value` as a `type_name` (empty when it is valid)."""
        validator = self._validators.get(type_name)
        if validator is None:
            schema = {**self._root, "$ref": f"#/$defs/{type_name}__closed"}
            validator = self._validators[type_name] = Draft202012Validator(schema)
        return [
            f"{'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message}"
            for e in sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
        ]

    def check(self, wire: Sequence[tuple[Direction, dict[str, Any]]]) -> tuple[list[Problem], set[str]]:
        """Every problem in a recorded exchange, and the type names it exercised."""
        problems: list[Problem] = []
        seen: set[str] = set()
        methods: dict[tuple[Direction, Any], str] = {}  # (who sent the request, id) -> method
        for direction, message in wire:
            # The side whose method it is: the agent serves what the client sends, and the reverse.
            side = "agent" if direction == "sent" else "client"
            method = message.get("method")
            if isinstance(method, str):
                if method.startswith("_"):
                    continue
                is_request = "id" in message
                if is_request:
                    methods[(direction, message["id"])] = method
                kind = "Request" if is_request else "Notification"
                type_name = self.type_for(method, side, kind) or self.type_for(method, "protocol", kind)
                if type_name is None:
                    problems.append(Problem(direction, message, "?", [f"no {kind} type for {method!r}"]))
                    continue
                seen.add(type_name)
                found = self.errors(type_name, message.get("params") or {})
            else:
                asker: Direction = "received" if direction == "sent" else "sent"
                asked = methods.pop((asker, message.get("id")), None)
                if asked is None or asked.startswith("_"):
                    continue
                if "error" in message:
                    type_name = "Error"
                    found = self.errors(type_name, message["error"])
                else:
                    asked_side = "agent" if asker == "sent" else "client"
                    type_name = self.type_for(asked, asked_side, "Response") or "?"
                    if type_name == "?":
                        found = [f"no Response type for {asked!r}"]
                    else:
                        found = self.errors(type_name, message.get("result"))
                seen.add(type_name)
            if found:
                problems.append(Problem(direction, message, type_name, found))
        return problems, seen


def session_updates(wire: Iterable[tuple[Direction, dict[str, Any]]]) -> set[str]:
    """The `sessionUpdate` kinds in an exchange."""
    return {
        str(m["params"]["update"].get("sessionUpdate"))
        for _, m in wire
        if m.get("method") == "session/update" and isinstance(m.get("params"), dict)
    }
