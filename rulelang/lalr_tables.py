"""Lark's LALR parser for the grammar (its parse table and its contextual lexer) as plain data: what
rulelang/lalr_loop.py runs. Used only by rulelang/parser_generate.py, which writes the data to
rulelang/grammar_tables.py from the stand-alone parser Lark's tool made (rulelang/grammar_standalone.py):
the objects read here are that module's own, so no installed Lark is needed, and none is imported.

Only built-in values (dict, list, tuple, frozenset, str, int, bool, None).

The parse table: for each state, {symbol: next state, or ~rule number to reduce by}. The rules: their
length, the nonterminal they make and ``shape`` (how rulelang/parser.py turns their children into the
builder's arguments, worked out from Lark's tree-builder settings: see ``rule_shapes``).

The lexer. Lark's contextual lexer keeps, for each set of terminals a parser state accepts, a lexer
whose scanner is one regular expression: the terminals of the set as alternatives, in Lark's order
(priority, longest possible match, length, name), except the keyword strings a name pattern also
matches (found by matching the name, then looking the text up among the keywords). The first
alternative that matches wins. Compiling that expression for each of the hundred or so sets a file
meets costs more than the rest of lexing a large file.

Lark's root lexer has the same kind of scanner for all terminals at once. When the alternatives of a
state's scanner are all alternatives of the root scanner (its keyword strings too are folded into the
names there), they come in the same order, so wherever the root scanner's first matching alternative
is one of the state's, the state's scanner picks that same alternative with the same text: every
alternative before it in the state's order comes before it in the root's order, and did not match.
Such a lexer is stored as shared, with its alternatives: the loop matches with the root's expression
and the state's keyword test, and only when the root finds a terminal the state does not try, or for
lexers whose scanner has alternatives the root's lacks (keywords where no name may stand), compiles
and uses the state's own expression (stored as Lark builds it).
"""
from __future__ import annotations

FORMAT = 1  # the layout below; stored with the data


def _frontend(standalone):
    return standalone.Lark_StandAlone().parser


def _rules(standalone, table):
    """The rules of the parse table (the very objects the parser reduces by), in a stable order."""
    rules = {}
    for actions in table.states.values():
        for _, arg in actions.values():
            if isinstance(arg, standalone.Rule):
                rules.setdefault(id(arg), arg)
    return list(rules.values())


def rule_shapes(standalone, table):
    """The rules of the parse table, each with how its children become a value: (rule, name, children
    to keep or None, Nones to add at the end, single child passed through), from Lark's own tree-builder
    settings (child filter, placeholders, inlining)."""
    shapes = []
    for rule in _rules(standalone, table):
        opts = rule.options
        name = str(rule.alias or opts.template_source or rule.origin.name)
        filt = standalone.maybe_create_child_filter(rule.expansion, opts.keep_all_tokens, False,
                                                        opts.empty_indices)
        if filt is None:
            include, nones = None, 0
        elif len(filt.args) == 1:  # no placeholders in this rule
            include, nones = tuple((int(i), bool(x), 0) for i, x in filt.args[0]), 0
        else:
            include, nones = tuple((int(i), bool(x), int(n)) for i, x, n in filt.args[0]), int(filt.args[1])
        expand1 = bool(opts.expand1 and not rule.alias)
        shapes.append((rule, name, include, nones, expand1))
    return shapes


def from_standalone(standalone, start: str = "start"):
    """The plain tables of the stand-alone parser module ``standalone`` (parser "lalr", lexer
    "contextual"), or None when something in it is more than lalr_loop runs."""
    import re

    frontend = _frontend(standalone)
    table = frontend.parser._parse_table
    lexer = frontend.lexer
    states = table.states
    if (not isinstance(lexer, standalone.ContextualLexer) or set(states) != set(range(len(states)))
            or not isinstance(table.start_states[start], int)):
        return None
    shapes = rule_shapes(standalone, table)
    number = {id(shape[0]): i for i, shape in enumerate(shapes)}
    rows = []
    for state in range(len(states)):
        row = {}
        for symbol, (action, arg) in states[state].items():
            row[str(symbol)] = int(arg) if action is standalone.Shift else ~number[id(arg)]
        rows.append(row)
    rules = [(len(rule.expansion), str(rule.origin.name), name, include, nones, expand1)
             for rule, name, include, nones, expand1 in shapes]

    root = lexer.root_lexer
    if any(x.re is not re or x.use_bytes or x.g_regex_flags != root.g_regex_flags
           for x in (root, *lexer.lexers.values())):
        return None
    root_mres = root.scanner._mres
    # (a terminal that refers back to a numbered group would match differently inside another
    # alternation, where its groups have other numbers)
    shared = len(root_mres) == 1 and not any(re.search(r"\\[1-9]|\(\?P=", t.pattern.to_regexp())
                                            for t in root.terminals)
    root_names = frozenset(str(t.name) for t in root.scanner.terminals)
    lexers, index, of_state = [], {}, []
    for state in range(len(states)):
        basic = lexer.lexers[state]
        if id(basic) not in index:
            index[id(basic)] = len(lexers)
            lexers.append(_lexer(basic, root_names if shared else frozenset(), standalone.UnlessCallback))
        of_state.append(index[id(basic)])
    return {
        "format": FORMAT,
        "start": int(table.start_states[start]), "end": int(table.end_states[start]),
        "rows": rows, "rules": rules,
        "flags": int(root.g_regex_flags), "root": root_mres[0].pattern if shared else None,
        "lexers": lexers, "lexer_of_state": of_state,
    }


def _lexer(basic, root_names, UnlessCallback):
    """One of Lark's lexers as (its scanner's expressions, whether the root's expression may be used
    instead, the terminals its scanner tries, {terminal: {text: keyword terminal}} (Lark's keyword test,
    see _keyword_table), terminals that may hold a newline, ignored terminals); None when it has
    callbacks other than the keyword test."""
    if basic.user_callbacks:
        return None
    scanner = basic.scanner  # builds basic.callback too
    keywords = {}
    for kind, callback in basic.callback.items():
        words = _keyword_table(callback.scanner.terminals) if callback.__class__ is UnlessCallback else None
        if words is None:
            return None
        keywords[str(kind)] = words
    alternatives = frozenset(str(t.name) for t in scanner.terminals)
    return ([mre.pattern for mre in scanner._mres], alternatives <= root_names, alternatives, keywords,
            frozenset(map(str, basic.newline_types)), frozenset(map(str, basic.ignore_types)))


def _keyword_table(terminals):
    """Lark's keyword test (an UnlessCallback: a name that fully matches one of the keyword strings
    takes the keyword's terminal) as a dictionary {keyword text: terminal}, when every keyword is a
    plain string without flags (a full match is then equality); None otherwise."""
    words = {}
    for term in terminals:
        pattern = term.pattern
        if pattern.type != "str" or pattern.flags:
            return None
        words.setdefault(str(pattern.value), str(term.name))
    return words
