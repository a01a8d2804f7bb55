"""The exception for bad input, shown to the user as a message, never as a traceback; and its kind for a
bad option, which names the option so that the command line can name its flag."""


class UserError(Exception):
    """Bad input (a template, a trace, a flag). `str(error)` is the whole message for the user."""


class InvalidOption(UserError):
    """A library option (a parameter, a field of an options object) with a bad value. The library knows
    the option by its field name; the command line shows `field` as its flag (qtc/commands/_options.py)."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field} {message}")
        self.field = field
        self.message = message  # what follows the option's name: "must be at least 1, got 0"
