"""The built-in promptcache lint rules, one module per family.

- :mod:`lint_rules.volatile` (PC1xx): values that change per call or per user in the prefix;
- :mod:`lint_rules.history` (PC2xx): conversation history rewritten instead of appended;
- :mod:`lint_rules.ordering` (PC3xx): tools and JSON in an order the program does not fix;
- :mod:`lint_rules.whitespace` (PC401-PC403) and :mod:`lint_rules.characters` (PC404-PC406): invisible
  differences in prompt text (one family in two modules, to keep each under ~400 lines);
- :mod:`lint_rules.tool_set` (PC306) and :mod:`lint_rules.parameters` (PC501-PC503): request options that
  change over one conversation, reported through :mod:`lint_rules.option_churn` (their shared driver);
- :mod:`lint_rules.breakpoints` (PC601-PC604): Anthropic cache breakpoints.

The engine imports every module of this package and reads the rules they
register (:mod:`promptcache.lint.registry`).
"""
