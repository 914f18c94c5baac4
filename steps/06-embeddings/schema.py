"""Check tool arguments against the small part of JSON Schema the tools declare.

A tool declares its input as JSON Schema (tools/list sends it to the client). This
module checks what the model sent against that declaration and says, field by
field, what is wrong, in words a model can act on:

    limit: must be an integer (1 to 200), got "ten"

Decisions:
- Only the keywords in KEYWORDS are understood. check_schema refuses any other one
  when the tool is declared, at import: a keyword that is silently ignored is a
  check that silently never happens.
- validate does not fill in defaults. A schema's "default" tells the model what
  happens when it leaves a field out; the tool starts from defaults(schema), so
  each default is written once, in the schema.
- Booleans are not integers or numbers, although Python's bool is a subclass of int.
- 1.0 is not an integer (JSON Schema 2020-12 would accept it): a tool gets a
  Python int it can use as a count or an index.
- NaN and Infinity, which Python's json module accepts, are not numbers.
- enum compares values as JSON does, so true is not 1.
"""
import json
import math

KEYWORDS = {
    "type", "properties", "required", "additionalProperties", "enum", "items",
    "minimum", "maximum", "minLength", "maxLength", "default", "title", "description",
}


# region types
def is_integer(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)  # True is an int in Python, not in JSON


TYPES = {
    "object": lambda value: isinstance(value, dict),
    "array": lambda value: isinstance(value, list),
    "string": lambda value: isinstance(value, str),
    "integer": is_integer,
    "number": lambda value: is_integer(value) or (isinstance(value, float) and math.isfinite(value)),
    "boolean": lambda value: isinstance(value, bool),
    "null": lambda value: value is None,
}
# endregion types

NAMES = {"object": "an object", "array": "an array", "string": "a string", "integer": "an integer",
         "number": "a number", "boolean": "a boolean (true or false)", "null": "null"}


class SchemaError(Exception):
    """A tool declared a schema this module cannot check: a bug for the developer."""


# region check-schema
def check_schema(schema, where: str = "schema") -> None:
    """Raise SchemaError unless schema uses only what validate understands."""
    if not isinstance(schema, dict):
        raise SchemaError(f"{where}: a schema must be a dict, got {schema!r}")
    unknown = sorted(set(schema) - KEYWORDS)
    if unknown:
        raise SchemaError(f"{where}: unsupported keyword(s) {unknown}; supported: {sorted(KEYWORDS)}")
    for name in types_of(schema):
        if name not in TYPES:
            raise SchemaError(f"{where}: unknown type {name!r}")
    properties = schema.get("properties", {})
    for name, subschema in properties.items():
        check_schema(subschema, f"{where}.properties.{name}")
    if "items" in schema:
        check_schema(schema["items"], f"{where}.items")
    if set(schema.get("required", [])) - set(properties):
        raise SchemaError(f"{where}: 'required' names a field that is not in 'properties'")
    if schema.get("additionalProperties", True) not in (True, False):
        raise SchemaError(f"{where}: additionalProperties must be true or false")
    if "default" in schema and validate(schema, schema["default"]):
        raise SchemaError(f"{where}: the default {schema['default']!r} breaks its own schema")
# endregion check-schema


def defaults(schema: dict) -> dict:
    """The top-level defaults; a tool runs with defaults(schema) | arguments."""
    return {name: sub["default"] for name, sub in schema.get("properties", {}).items() if "default" in sub}


# region validate
def validate(schema: dict, value) -> list[str]:
    """Every way value breaks schema, one message per field; [] when it fits.
    A field is named by its path ('limit', 'filter.tags[2]'); the value itself is 'arguments'."""
    errors = []
    check(schema, value, "", errors)
    return errors


def check(schema: dict, value, path: str, errors: list[str]) -> None:
    if not fits(schema, value):
        errors.append(f"{path or 'arguments'}: must be {expected(schema)}, got {shown(value)}")
    elif isinstance(value, dict):
        check_object(schema, value, path, errors)
    elif isinstance(value, list) and "items" in schema:
        for index, item in enumerate(value):
            check(schema["items"], item, f"{path}[{index}]", errors)


def check_object(schema: dict, value: dict, path: str, errors: list[str]) -> None:
    properties = schema.get("properties", {})
    prefix = f"{path}." if path else ""
    for name in schema.get("required", []):
        if name not in value:
            errors.append(f"{prefix}{name}: missing; must be {expected(properties[name])}")
    if schema.get("additionalProperties") is False:
        accepted = ", ".join(properties) or "none"
        for name in [name for name in value if name not in properties]:  # in the order sent
            errors.append(f"{prefix}{shown(name)}: unknown field; the accepted fields are: {accepted}")
    for name, subschema in properties.items():
        if name in value:
            check(subschema, value[name], prefix + name, errors)
# endregion validate


# region fits
def fits(schema: dict, value) -> bool:
    """Type, enum and bounds: everything about value itself, not its members."""
    types = types_of(schema)
    if types and not any(TYPES[name](value) for name in types):
        return False
    if "enum" in schema and not any(same_json(value, option) for option in schema["enum"]):
        return False
    # A bound the schema does not set is replaced by one the value always meets.
    if TYPES["number"](value):
        return schema.get("minimum", value) <= value <= schema.get("maximum", value)
    if isinstance(value, str):
        return schema.get("minLength", 0) <= len(value) <= schema.get("maxLength", len(value))
    return True
# endregion fits


def expected(schema: dict) -> str:
    """What fits schema, in words: 'an integer (1 to 200)'."""
    if "enum" in schema:
        return "one of " + ", ".join(shown(option) for option in schema["enum"])
    words = " or ".join(NAMES[name] for name in types_of(schema)) or "any JSON value"
    if "minimum" in schema or "maximum" in schema:
        words += f" ({bounds(schema.get('minimum'), schema.get('maximum'))})"
    if "minLength" in schema or "maxLength" in schema:
        words += f" (length {bounds(schema.get('minLength'), schema.get('maxLength'))})"
    return words


def bounds(low, high) -> str:
    if low is not None and high is not None:
        return f"{low} to {high}"
    return f"at least {low}" if high is None else f"at most {high}"


def types_of(schema: dict) -> list[str]:
    kind = schema.get("type", [])
    return [kind] if isinstance(kind, str) else list(kind)


def same_json(a, b) -> bool:
    return json.dumps(a, sort_keys=True, default=repr) == json.dumps(b, sort_keys=True, default=repr)


def shown(value, limit: int = 60) -> str:
    """value as JSON, as the model wrote it, cut short when long."""
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= limit else text[: limit - 1] + "…"
