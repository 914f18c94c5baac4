"""Step 4's schema.py: tool arguments checked against a small JSON Schema subset."""
import random

import pytest
from helpers import STEPS_DIR, step_modules

with step_modules(STEPS_DIR / "04-tools-and-notes"):
    from schema import SchemaError, check_schema, defaults, validate

LIST_NOTES = {
    "type": "object",
    "properties": {
        "folder": {"type": "string", "minLength": 1, "maxLength": 200},
        "limit": {"type": "integer", "minimum": 1, "maximum": 200, "default": 50},
        "order": {"enum": ["name", "modified"], "default": "name"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "cursor": {"type": ["string", "null"]},
    },
    "required": ["folder"],
    "additionalProperties": False,
}


def test_the_example_schema_is_a_valid_declaration():
    check_schema(LIST_NOTES)


def test_arguments_that_fit_pass():
    assert validate(LIST_NOTES, {"folder": "Bread"}) == []
    assert validate(LIST_NOTES, {"folder": "Bread", "limit": 200, "order": "modified", "tags": [], "cursor": None}) == []


def test_a_wrong_type_names_the_field_what_it_must_be_and_what_came():
    assert validate(LIST_NOTES, {"folder": "Bread", "limit": "ten"}) == [
        'limit: must be an integer (1 to 200), got "ten"'
    ]


@pytest.mark.parametrize("value", [True, False])
def test_a_boolean_is_not_an_integer_nor_a_number(value):
    assert validate({"type": "integer"}, value) == [f"arguments: must be an integer, got {str(value).lower()}"]
    assert validate({"type": "number"}, value)


def test_integers_are_numbers_but_a_float_is_not_an_integer():
    assert validate({"type": "number"}, 3) == []
    assert validate({"type": "number"}, 2.5) == []
    assert validate({"type": "integer"}, 1.0) == ["arguments: must be an integer, got 1.0"]


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_nan_and_infinity_are_not_numbers(value):
    assert validate({"type": "number"}, value)


def test_bounds_are_inclusive_and_named():
    schema = LIST_NOTES["properties"]["limit"]
    assert validate(schema, 1) == validate(schema, 200) == []
    assert validate(schema, 0) == ["arguments: must be an integer (1 to 200), got 0"]
    assert validate({"type": "number", "minimum": 0}, -1) == ["arguments: must be a number (at least 0), got -1"]
    assert validate({"type": "number", "maximum": 9}, 10) == ["arguments: must be a number (at most 9), got 10"]


def test_string_length_counts_characters():
    schema = {"type": "string", "minLength": 1, "maxLength": 3}
    assert validate(schema, "été") == []
    assert validate(schema, "") == ['arguments: must be a string (length 1 to 3), got ""']
    assert validate(schema, "four") == ['arguments: must be a string (length 1 to 3), got "four"']


def test_a_missing_required_field_says_what_to_send():
    assert validate(LIST_NOTES, {}) == ["folder: missing; must be a string (length 1 to 200)"]


def test_an_unknown_field_lists_the_accepted_ones():
    errors = validate(LIST_NOTES, {"folder": "Bread", "limt": 3})
    assert errors == ['"limt": unknown field; the accepted fields are: folder, limit, order, tags, cursor']


def test_unknown_fields_are_reported_in_the_order_sent():
    errors = validate(LIST_NOTES, {"zz": 1, "folder": "x", "aa": 2})
    assert [error.split(":")[0] for error in errors] == ['"zz"', '"aa"']


def test_extra_fields_pass_unless_additional_properties_is_false():
    assert validate({"type": "object", "properties": {}}, {"anything": 1}) == []


def test_enum_lists_the_choices_and_true_is_not_1():
    assert validate(LIST_NOTES["properties"]["order"], "size") == [
        'arguments: must be one of "name", "modified", got "size"'
    ]
    assert validate({"enum": [1]}, True)
    assert validate({"enum": [True]}, True) == []


def test_array_items_are_named_by_index():
    assert validate(LIST_NOTES, {"folder": "x", "tags": ["a", 2, "c", None]}) == [
        "tags[1]: must be a string, got 2",
        "tags[3]: must be a string, got null",
    ]


def test_a_list_of_types_accepts_each():
    schema = LIST_NOTES["properties"]["cursor"]
    assert validate(schema, None) == validate(schema, "abc") == []
    assert validate(schema, 3) == ["arguments: must be a string or null, got 3"]


def test_every_problem_is_reported_at_once():
    errors = validate(LIST_NOTES, {"limit": 0, "order": 1, "x": 1})
    assert len(errors) == 4  # folder missing, x unknown, limit and order wrong


def test_nested_objects_name_the_path():
    schema = {"type": "object", "properties": {"filter": LIST_NOTES}}
    assert validate(schema, {"filter": {"folder": 7}}) == [
        "filter.folder: must be a string (length 1 to 200), got 7"
    ]


def test_arguments_that_are_not_an_object():
    assert validate(LIST_NOTES, [1, 2]) == ["arguments: must be an object, got [1, 2]"]


def test_a_long_value_is_cut_short_in_the_message():
    (message,) = validate({"type": "integer"}, "x" * 10_000)
    assert len(message) < 120 and message.endswith("…")


def test_defaults_come_from_the_schema_and_validate_fills_none():
    assert defaults(LIST_NOTES) == {"limit": 50, "order": "name"}
    arguments = {"folder": "Bread"}
    assert validate(LIST_NOTES, arguments) == [] and arguments == {"folder": "Bread"}
    assert defaults(LIST_NOTES) | {"folder": "Bread", "limit": 5} == {"folder": "Bread", "limit": 5, "order": "name"}


@pytest.mark.parametrize(
    "schema, words",
    [
        ({"type": "object", "properties": {"when": {"type": "string", "format": "date"}}}, "properties.when: unsupported keyword(s) ['format']"),
        ({"type": "strng"}, "unknown type 'strng'"),
        ({"type": "object", "properties": {}, "required": ["x"]}, "'required' names a field that is not in 'properties'"),
        ({"type": "integer", "minimum": 1, "default": 0}, "the default 0 breaks its own schema"),
        ({"type": "object", "additionalProperties": {"type": "string"}}, "additionalProperties must be true or false"),
        ({"type": "array", "items": {"pattern": "x"}}, "schema.items: unsupported keyword(s) ['pattern']"),
        ("object", "a schema must be a dict"),
    ],
)
def test_a_declaration_the_validator_cannot_honour_is_refused(schema, words):
    with pytest.raises(SchemaError) as caught:
        check_schema(schema)
    assert words in str(caught.value)


# Random schemas from the supported subset, and random JSON values, from a seeded
# generator: the same cases on every run, bounded in number and depth.
SCALARS = [None, True, False, 0, 1, -7, 2**70, 1.0, 2.5, float("nan"), "", "a", "ten", "é" * 5, "x" * 300]
TYPE_NAMES = ["object", "array", "string", "integer", "number", "boolean", "null"]


def random_value(rng: random.Random, depth: int = 0):
    roll = rng.random()
    if depth > 2 or roll < 0.6:
        return rng.choice(SCALARS)
    if roll < 0.8:
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {rng.choice(["a", "b", "limit", "", "🙂"]): random_value(rng, depth + 1) for _ in range(rng.randrange(4))}


def random_schema(rng: random.Random, depth: int = 0) -> dict:
    kind = rng.choice(TYPE_NAMES if depth < 2 else TYPE_NAMES[2:])
    schema = {"type": kind if rng.random() < 0.8 else [kind, "null"]}
    if kind == "object":
        names = rng.sample(["a", "b", "limit"], rng.randrange(4))
        schema["properties"] = {name: random_schema(rng, depth + 1) for name in names}
        schema["required"] = [name for name in names if rng.random() < 0.5]
        schema["additionalProperties"] = rng.random() < 0.5
    elif kind == "array":
        schema["items"] = random_schema(rng, depth + 1)
    elif kind in ("integer", "number"):
        low = rng.randrange(-5, 5)
        schema |= {"minimum": low, "maximum": low + rng.randrange(10)}
    elif kind == "string" and rng.random() < 0.5:
        schema |= {"minLength": 1, "maxLength": rng.randrange(1, 10)}
    if kind == "string" and rng.random() < 0.2:
        schema = {"enum": ["x", "y", 1]}
    return schema


def fitting_value(schema: dict, rng: random.Random):
    """A value built to fit schema."""
    if "enum" in schema:
        return rng.choice(schema["enum"])
    kind = schema["type"] if isinstance(schema["type"], str) else schema["type"][0]
    if kind == "object":
        properties = schema["properties"]
        return {name: fitting_value(sub, rng) for name, sub in properties.items() if name in schema["required"] or rng.random() < 0.5}
    if kind == "array":
        return [fitting_value(schema["items"], rng) for _ in range(rng.randrange(3))]
    if kind == "integer":
        return rng.randint(schema["minimum"], schema["maximum"])
    if kind == "number":
        return rng.uniform(schema["minimum"], schema["maximum"])
    if kind == "string":
        return "s" * rng.randint(schema.get("minLength", 0), schema.get("maxLength", 5))
    return {"boolean": True, "null": None}[kind]


def test_random_schemas_are_valid_declarations_and_their_values_fit():
    rng = random.Random(4)
    for _ in range(500):
        schema = random_schema(rng)
        check_schema(schema)
        value = fitting_value(schema, rng)
        assert validate(schema, value) == [], (schema, value)


def test_random_values_get_messages_never_exceptions():
    rng = random.Random(40)
    for _ in range(2000):
        schema, value = random_schema(rng), random_value(rng)
        errors = validate(schema, value)
        assert isinstance(errors, list) and all(isinstance(e, str) and ": " in e for e in errors)


def test_a_value_of_the_wrong_type_always_gets_a_message():
    rng = random.Random(400)
    wrong = {"integer": [True, 1.0, "1", None], "number": [False, "1.5", float("nan")], "string": [1, None, ["a"]],
             "boolean": [0, 1, "true"], "null": [0, "", False], "array": [{}, "a"], "object": [[], "a", None]}
    for _ in range(300):
        kind = rng.choice(TYPE_NAMES)
        value = rng.choice(wrong[kind])
        assert validate({"type": kind}, value), (kind, value)
        assert validate({"type": "object", "properties": {"f": {"type": kind}}}, {"f": value})[0].startswith("f: ")
