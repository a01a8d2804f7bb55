"""The subcommands of `qtc`, one module each (listed in workflow order in qtc/cli.py); `_options.py` holds
what the commands that ask a model share, `_roms.py` where story files are looked for."""
