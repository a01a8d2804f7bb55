"""The one exception type for bad input: shown to the user as a message, never as a traceback."""


class UserError(Exception):
    """Bad input (a template, a trace, a flag). `str(error)` is the whole message for the user."""
