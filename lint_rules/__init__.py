"""The built-in promptcache lint rules, one module per concept.

- :mod:`lint_rules.volatile` (PC101, PC102): volatile or per-user values in the system prompt;
  :mod:`lint_rules.volatile_blocks` (PC103-PC105): the same in cached message blocks, tool definitions and
  ``prompt_cache_key=``;
- :mod:`lint_rules.history` (PC2xx): conversation history rewritten instead of appended;
- :mod:`lint_rules.ordering` (PC301, PC302): tool lists in an order the program does not fix;
  :mod:`lint_rules.mcp_listing` (PC305): MCP listings unsorted or re-listed each turn;
  :mod:`lint_rules.content_order` (PC303, PC304): shuffled examples and unsorted JSON;
- :mod:`lint_rules.whitespace` (PC401-PC403) and :mod:`lint_rules.characters` (PC404-PC406): invisible
  differences in prompt text (one family in two modules, to keep each under ~400 lines);
- :mod:`lint_rules.tool_set` (PC306) and :mod:`lint_rules.parameters` (PC501-PC503): request options that
  change over one conversation, reported through :mod:`lint_rules.option_churn` (their shared driver);
- :mod:`lint_rules.breakpoints` (PC601, PC602): where Anthropic cache breakpoints sit;
  :mod:`lint_rules.breakpoint_sizes` (PC603, PC604): prefixes left uncached or below the minimum.

:mod:`lint_rules.volatile_cases` and :mod:`lint_rules.history_cases` hold case data (INVALID code strings) of
the PC1xx and PC201-PC203 rules, to keep the rule modules short; they define no rules.

The engine imports every module of this package and reads the rules they
register (:mod:`promptcache.lint.registry`).
"""
