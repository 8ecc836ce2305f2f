"""A quicker run of the LALR parser that rulelang/parser.py gets from Lark, for text without errors.

It reads Lark's own parse table and lexers and does what Lark's parser loop does (lark/parsers/
lalr_parser.py, lalr_parser_state.py and the contextual lexer in lark/lexer.py), in one tight loop:

* the same tokens: in each parser state, the scanner of the lexer Lark keeps for that state (only the
  terminals the state accepts, tried in Lark's order; keywords told from names by Lark's own rule),
  with the same type, value and positions (start, line, column, end line, end column, end);
* the same callbacks, called in the same order with the same children: a token callback when a token
  is shifted, a rule callback at each reduction, then the end of the text.

So the value it returns is the one Lark's parser would return. It never reports an error: at the
first character no terminal of the state matches, or the first token the table has no action for, it
raises `NotParsed`, and the caller parses the text again with Lark (whose error recovery and
messages stay the only ones a user sees).
"""
from __future__ import annotations

from lark import Token
from lark.parsers.lalr_analysis import Shift

from .lalr_lexers import Scanners

_new_str = str.__new__


class NotParsed(Exception):
    """The text has a lexing or parsing error, or uses something this loop does not cover: Lark parses it."""


class Loop:
    """The parse table and lexers of one Lark ``ParsingFrontend`` (parser "lalr", lexer "contextual"),
    put in the shapes the loop reads quickly, state by state as the parses reach them.

    ``rules``: every rule the table reduces by (the keys of the callbacks ``parse`` gets); ``passing``:
    those of them whose value is their only child, unchanged (the callback ``parse`` gets for them is
    never called: the child stays where it is on the stack)."""

    def __init__(self, frontend, rules, passing=(), start: str = "start"):
        table = frontend.parser._parse_table
        self.states = table.states
        self.start_state = table.start_states[start]
        self.end_state = table.end_states[start]
        if not isinstance(self.start_state, int) or set(self.states) != set(range(len(self.states))):
            raise NotParsed("the parse table does not number its states 0, 1, ...")
        self.rules = list(rules)
        self.rule_index = {id(r): i for i, r in enumerate(self.rules)}
        passing = {id(r) for r in passing}
        self.passing = [id(r) in passing and len(r.expansion) == 1 for r in self.rules]
        self.origins = [str(r.origin.name) for r in self.rules]
        # (state below, state, next terminal) -> the state after the reductions by passing rules
        # that terminal leads to from there (these chains, `?sum: term` and the like, are most of the
        # reductions of an expression grammar: one look-up instead of two per rule)
        self.chains = {}
        # parser state -> {symbol: next state (>= 0) or ~index of the rule to reduce by}; symbols are
        # plain str here (Lark's are often its Token, whose == runs Python code at every lookup)
        self.rows = [None] * len(self.states)
        self.scanners = Scanners(frontend.lexer)
        self.scans = [None] * len(self.states)  # parser state -> what its lexer needs (Scanners.for_state)

    def _row(self, state):
        row = {}
        for symbol, (action, arg) in self.states[state].items():
            if action is Shift:
                row[str(symbol)] = arg
            else:
                row[str(symbol)] = ~self.rule_index[id(arg)]
        self.rows[state] = row
        return row

    def _chain(self, below, state, kind):
        """The state reached from ``state`` (``below`` under it on the stack) by reducing by passing
        rules while ``kind`` asks for that; NotParsed when the table has no goto."""
        key = (below, state, kind)
        rows, passing, origins = self.rows, self.passing, self.origins
        while True:
            row = rows[state] or self._row(state)
            act = row.get(kind)
            if act is None or act >= 0 or not passing[~act]:
                break
            state = (rows[below] or self._row(below)).get(origins[~act], -1)
            if state < 0:
                raise NotParsed("no goto")
        self.chains[key] = state
        return state

    def _scan(self, state):
        found = self.scans[state] = self.scanners.for_state(state)
        return found

    def parse(self, text: str, callbacks: dict):
        """The value of the start rule for ``text``, built by ``callbacks`` (terminal name or rule ->
        function, as Lark's parser takes them). Raises NotParsed where Lark would report an error."""
        if not isinstance(text, str):
            raise NotParsed("not text")
        rules = [(-1 if passes else len(r.expansion), None if passes else callbacks[r], origin)
                 for r, passes, origin in zip(self.rules, self.passing, self.origins)]
        chains, chain_of = self.chains, self._chain
        token_callbacks = {k: v for k, v in callbacks.items() if isinstance(k, str)}
        rows, row_of = self.rows, self._row
        scans, scan_of, own_scan = self.scans, self._scan, self.scanners.own
        end_state = self.end_state
        states = [self.start_state]
        values = []
        state = self.start_state
        pos, line, line_start = 0, 1, 0
        size = len(text)
        while pos < size:
            # ---- the next token, as the contextual lexer reads it in this state
            scan = scans[state]
            if scan is None:
                scan = scan_of(state)
            match, alternatives, keywords, lexer_callbacks, newline_types, ignore_types = scan
            m = match(text, pos)
            if m is None:
                raise NotParsed("no terminal matches")
            kind = m.lastgroup
            if alternatives is not None and kind not in alternatives:
                # the shared scanner found a terminal this state does not try: its own scanner reads
                match, keywords, lexer_callbacks = own_scan(state)
                m = match(text, pos)
                if m is None:
                    raise NotParsed("no terminal matches")
                kind = m.lastgroup
            value = m.group(0)
            end = m.end()
            end_line, end_start = line, line_start
            if kind in newline_types:
                newlines = value.count("\n")
                if newlines:
                    end_line = line + newlines
                    end_start = pos + value.rindex("\n") + 1
            if kind in ignore_types and kind not in lexer_callbacks:
                pos, line, line_start = end, end_line, end_start
                continue
            tok = _new_str(Token, value)
            tok.type = keywords[kind].get(value, kind) if kind in keywords else kind
            tok.start_pos = pos
            tok.value = value
            tok.line = line
            tok.column = pos - line_start + 1
            tok.end_line = end_line
            tok.end_column = end - end_start + 1
            tok.end_pos = end
            pos, line, line_start = end, end_line, end_start
            if kind in lexer_callbacks:
                tok = lexer_callbacks[kind](tok)
                if kind in ignore_types:
                    continue
                if not isinstance(tok, Token):
                    raise NotParsed("a lexer callback returned no token")
            kind = tok.type
            # ---- feed it: reduce as the table says, then shift
            while True:
                row = rows[state]
                if row is None:
                    row = row_of(state)
                act = row.get(kind)
                if act is None:
                    raise NotParsed("unexpected token")
                if act >= 0:
                    if act == end_state:
                        raise NotParsed("shift into the end state")
                    states.append(act)
                    state = act
                    values.append(token_callbacks[kind](tok) if kind in token_callbacks else tok)
                    break
                n, callback, origin = rules[~act]
                if n < 0:  # rules that pass their only child on: the value stays, the state changes
                    below = states[-2]
                    state = chains.get((below, state, kind))
                    if state is None:
                        state = chain_of(below, states[-1], kind)
                    states[-1] = state
                    continue
                if n:
                    children = values[-n:]
                    del values[-n:]
                    del states[-n:]
                else:
                    children = []
                values.append(callback(children))
                below = states[-1]
                row = rows[below]
                if row is None:
                    row = row_of(below)
                state = row.get(origin, -1)
                if state < 0:
                    raise NotParsed("no goto")
                states.append(state)
        # ---- the end of the text (Lark's '$END' token: it is never shifted)
        while True:
            row = rows[state]
            if row is None:
                row = row_of(state)
            act = row.get("$END")
            if act is None or act >= 0:
                raise NotParsed("unexpected end")
            n, callback, origin = rules[~act]
            if n < 0:  # the value stays
                n, callback = 1, _only_child
            if n:
                children = values[-n:]
                del values[-n:]
                del states[-n:]
            else:
                children = []
            values.append(callback(children))
            below = states[-1]
            row = rows[below]
            if row is None:
                row = row_of(below)
            state = row.get(origin, -1)
            if state < 0:
                raise NotParsed("no goto")
            states.append(state)
            if state == end_state:
                return values[-1]


def _only_child(children):
    return children[0]
