"""kvplan's version, and the version of the JSON envelope every command's --format json carries."""

__version__ = "0.1.0"

# Bumped when a JSON key is renamed or removed (adding keys keeps the version).
SCHEMA_VERSION = 1
