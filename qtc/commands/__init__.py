"""The subcommands of `qtc`, one module each."""
