"""The Lark grammar of .qtpl files (qtpl.lark), shipped as package data."""
