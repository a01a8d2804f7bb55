"""The question record (docs/qa-format.md): its fields with their JSON types, and the answer of a
question that cannot be answered. Generation writes records to this contract; reading, answering and
scoring rely on it.
"""

# The answer of every adversarial question (a false premise), and of no other.
NOT_ANSWERABLE = "not answerable"

# The record's fields and their JSON types, in the order of docs/qa-format.md, which is also the order
# of a written record's keys and of a Parquet file's columns.
QUESTION_SPEC = {
    "id": "str", "episode_id": "str", "env": "str", "game": "str", "template_id": "str",
    "category": "str", "difficulty": ("null", "str"), "answer_type": "str", "question": "str",
    "answer": "str", "accepted_answers": ("list", "str"), "adversarial": "bool",
    "bindings": ("dict", "str"), "evidence": ("list", "int"), "horizon": ("null", "int"),
    "seed": "int", "template_hash": "str",
    # Multiple choice: the options in the order shown (the answer is one of them); empty for an open
    # question (not null: readers that infer a column's type from its first rows, as pyarrow's JSON reader
    # does, fail on a list column that starts null). QA sets written before options existed lack the
    # field: read as empty.
    "options": ("list", "str"),
}
FIELDS = tuple(QUESTION_SPEC)
