"""Reading a command line into what it runs: the grammar, words, options and what each argv runs next (docs/approvals.md#parsing)."""
