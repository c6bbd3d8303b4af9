"""Running emulations: one scenario (``runner``), sweeps of many (``sweep``, ``sweep_pool``) and
their progress bars. Uses every layer below; the CLI and the API sit on top."""
