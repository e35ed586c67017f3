"""The CLI's commands: thin wrappers that parse, call the library, and render or dump."""
