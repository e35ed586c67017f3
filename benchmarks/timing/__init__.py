"""The tool's own speed, memory and budget, and its read tests beside reference tools."""
