"""The exit statuses of every command: 0 nothing found, 1 findings, 2 an error (usage,
configuration, or a file that could not be checked)."""

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
