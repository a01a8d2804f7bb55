"""The runtime: everything that runs around a compiled template, in the order of the workflow.

    play      record/    a game and an agent -> one trace file per episode (JSONL)
    load      trace/     trace files -> DuckDB tables (the store users also query by hand)
              spatial/   the spatial primitives, registered as DuckDB functions on every store
    generate  generate/  compiled templates x store -> sampled, rendered, checked question records
              qa/        the files generate writes and evaluate reads: QA sets, answers, resumable logs
    answer    evaluate/  questions -> a model's answers, from the context the agent observed
              memory/    or a memory provider's, fed each episode step by step and asked at each horizon
    score     evaluate/  answers -> scores, Accuracy and F1 with intervals
    report    view/      QA set, answers, traces -> one self-contained HTML page of the results
    export    export/    QA set, traces -> samples with their contexts for inspect_ai, lm-eval, datasets

`chat.py` is the one client for OpenAI-compatible models (retries, JSON read out of replies), used by
the LLM agent, answering and paraphrasing; `episode_rows.py` reads one episode's rows of a store without
scanning whole tables, for the spatial primitives and the logs shown to models; `arrow.py` maps the
language's storage types to Arrow and gives a statement's rows as an Arrow table (bound once); `user_code.py` imports
the user's own code named `package.module:Name` (an agent's factory, a memory provider). The runtime imports the language (`qtc.dsl`), the standard
library (`qtc.templates`) and `qtc.errors`/`qtc.files`/`qtc.processes`; the language never imports the runtime, and nothing here parses flags.
"""
