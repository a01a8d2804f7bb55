"""The standard library of question templates (.qtpl files), shipped as package data."""
