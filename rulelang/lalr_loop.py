"""A quick run of the LALR parser Lark's stand-alone tool generated (rulelang/grammar_standalone.py), for
text without errors, over that parser's tables as plain data (rulelang/grammar_tables.py, made by
rulelang/lalr_tables.py), without importing it.

It does what Lark's parser loop does (lark/parsers/lalr_parser.py, lalr_parser_state.py and the
contextual lexer in lark/lexer.py), in one tight loop:

* the same tokens: in each parser state, the first terminal of that state's scanner that matches
  (lalr_tables.py says when the root scanner stands in for it), with Lark's keyword test, the same type,
  text and positions (start, line, column, end line, end column, end) as Lark's tokens;
* the same callbacks, called in the same order with the same children: a token callback when a token
  is shifted, a rule callback at each reduction (except for the rules that pass their only child on,
  which leave it as it is), then the end of the text.

So the value it returns is the one Lark's parser would build. It never reports an error: at the first
character no terminal of the state matches, or the first token the table has no action for, it raises
`NotParsed`, and the caller parses the text again with Lark (whose error recovery and messages stay
the only ones a user sees).

Why it is kept beside Lark's own loop: it parses the largest shipped rule file (2,000 lines), building the AST, in about 75 ms
of CPU, where Lark's loop takes about 170 ms to build its parse tree with positions (most of it in the
ten or so reductions each operand of an expression goes through, which this loop takes in one step).
"""
from __future__ import annotations

import re
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

_new_str = str.__new__


class NotParsed(Exception):
    """The text has a lexing or parsing error, or uses something this loop does not cover: Lark parses it."""


Match = Callable[[str, int], Optional["re.Match[str]"]]  # (text, position) -> the terminal that matches there
Scan = tuple[Match, Optional[Any], Any, Any, Any]  # (match, alternatives, keywords, newline terminals, ignored ones)


class Token(str):
    """A token, with the attributes of Lark's ``Token`` (``type`` its terminal's name; positions as
    Lark counts them: lines and columns from 1, ``end_column`` just after the last character)."""
    __slots__ = ("type", "start_pos", "value", "line", "column", "end_line", "end_column", "end_pos")
    type: str
    start_pos: Optional[int]
    value: str
    line: Optional[int]
    column: Optional[int]
    end_line: Optional[int]
    end_column: Optional[int]
    end_pos: Optional[int]

    def __new__(cls, type: str, value: str, start_pos: Optional[int] = None, line: Optional[int] = None,
                column: Optional[int] = None, end_line: Optional[int] = None, end_column: Optional[int] = None,
                end_pos: Optional[int] = None) -> Token:
        inst = _new_str(cls, value)
        inst.type = type
        inst.start_pos = start_pos
        inst.value = value
        inst.line = line
        inst.column = column
        inst.end_line = end_line
        inst.end_column = end_column
        inst.end_pos = end_pos
        return inst

    @classmethod
    def new_borrow_pos(cls, type_: str, value: str, borrow_t: Token) -> Token:
        return cls(type_, value, borrow_t.start_pos, borrow_t.line, borrow_t.column, borrow_t.end_line,
                   borrow_t.end_column, borrow_t.end_pos)

    def __repr__(self) -> str:
        return f"Token({self.type!r}, {self.value!r})"


class Loop:
    """The parser of ``tables`` (lalr_tables.from_standalone), its regular expressions compiled on first use.
    ``passing``: the numbers of the rules whose value is their only child, unchanged."""

    def __init__(self, tables: dict[str, Any], passing: Iterable[int] = ()) -> None:
        self.start_state = tables["start"]
        self.end_state = tables["end"]
        self.rows = tables["rows"]  # state -> {symbol: next state (>= 0) or ~number of the rule to reduce by}
        self.rules = tables["rules"]  # (length, nonterminal, ...)
        self.origins = [rule[1] for rule in self.rules]
        passing = set(passing)
        self.passing = [i in passing and rule[0] == 1 for i, rule in enumerate(self.rules)]
        self.flags = tables["flags"]
        self.root = tables["root"]  # the root scanner's expression (None: never used)
        self.root_match: Optional[Match] = None
        self.lexers = tables["lexers"]
        self.lexer_of_state = tables["lexer_of_state"]
        self.scans: list[Optional[Scan]] = [None] * len(self.rows)  # state -> what the loop reads tokens with (see _scan)
        self.own_scans: dict[int, tuple[Match, Any]] = {}  # lexer number -> (match, keywords) of its own scanner
        # (state below, state, next terminal) -> the state after the reductions by passing rules
        # that terminal leads to from there (these chains, `?sum: term` and the like, are most of the
        # reductions of an expression grammar: one look-up instead of two per rule)
        self.chains: dict[tuple[int, int, str], int] = {}

    def _chain(self, below: int, state: int, kind: str) -> int:
        """The state reached from ``state`` (``below`` under it on the stack) by reducing by passing
        rules while ``kind`` asks for that; NotParsed when the table has no goto."""
        key = (below, state, kind)
        rows, passing, origins = self.rows, self.passing, self.origins
        while True:
            act = rows[state].get(kind)
            if act is None or act >= 0 or not passing[~act]:
                break
            state = rows[below].get(origins[~act], -1)
            if state < 0:
                raise NotParsed("no goto")
        self.chains[key] = state
        return state

    def _compile(self, patterns: Sequence[str]) -> Match:
        mres = [re.compile(p, self.flags) for p in patterns]
        if len(mres) == 1:
            return mres[0].match

        def match(text, pos):
            # type: (str, int) -> Optional[re.Match[str]]
            for mre in mres:
                m = mre.match(text, pos)
                if m:
                    return m
            return None
        return match

    def _own(self, state: int) -> tuple[Match, Any]:
        """(match, keywords) of the state's own scanner (compiled on first use)."""
        number = self.lexer_of_state[state]
        found = self.own_scans.get(number)
        if found is None:
            lexer = self.lexers[number]
            found = self.own_scans[number] = (self._compile(lexer[0]), lexer[3])
        return found

    def _scan(self, state: int) -> Scan:
        """(match, alternatives, keywords, newline terminals, ignored terminals) for ``state``:
        ``alternatives`` is None when ``match`` is the state's own scanner, else the terminals the state
        tries (a match of another terminal is read again with ``_own``)."""
        lexer = self.lexers[self.lexer_of_state[state]]
        if lexer is None:
            raise NotParsed("a lexer this loop does not run")
        patterns, shared, alternatives, keywords, newline, ignore = lexer
        if shared and self.root is not None:
            if self.root_match is None:
                self.root_match = self._compile([self.root])
            found: Scan = (self.root_match, alternatives, keywords, newline, ignore)
        else:
            found = (self._own(state)[0], None, keywords, newline, ignore)
        self.scans[state] = found
        return found

    def parse(self, text: str, rule_callbacks: Sequence[Optional[Callable[[list[Any]], Any]]],
              token_callbacks: Mapping[str, Callable[[Token], Any]]) -> Any:
        """The value of the start rule for ``text``, built by ``rule_callbacks`` (by rule number; those
        of passing rules are not called) and ``token_callbacks`` (terminal -> function of the token,
        called as the token is shifted). Raises NotParsed where Lark would report an error."""
        if not isinstance(text, str):
            raise NotParsed("not text")
        rules = [(-1 if passes else n, None if passes else callback, origin)
                 for (n, origin, *_), passes, callback in zip(self.rules, self.passing, rule_callbacks)]
        chains, chain_of = self.chains, self._chain
        rows = self.rows
        scans, scan_of, own_scan = self.scans, self._scan, self._own
        end_state = self.end_state
        states = [self.start_state]
        values: list[Any] = []
        state = self.start_state
        pos, line, line_start = 0, 1, 0
        size = len(text)
        while pos < size:
            # ---- the next token, as the contextual lexer reads it in this state
            scan = scans[state]
            if scan is None:
                scan = scan_of(state)
            match, alternatives, keywords, newline_types, ignore_types = scan
            m = match(text, pos)
            if m is None:
                raise NotParsed("no terminal matches")
            kind = m.lastgroup
            if alternatives is not None and kind not in alternatives:
                # the root scanner found a terminal this state does not try: its own scanner reads
                m = own_scan(state)[0](text, pos)
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
            if kind in ignore_types:
                pos, line, line_start = end, end_line, end_start
                continue
            tok = _new_str(Token, value)
            tok.type = kind = keywords[kind].get(value, kind) if kind in keywords else kind
            tok.start_pos = pos
            tok.value = value
            tok.line = line
            tok.column = pos - line_start + 1
            tok.end_line = end_line
            tok.end_column = end - end_start + 1
            tok.end_pos = end
            pos, line, line_start = end, end_line, end_start
            # ---- feed it: reduce as the table says, then shift
            while True:
                act = rows[state].get(kind)
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
                state = rows[states[-1]].get(origin, -1)
                if state < 0:
                    raise NotParsed("no goto")
                states.append(state)
        # ---- the end of the text (Lark's '$END' token: it is never shifted)
        while True:
            act = rows[state].get("$END")
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
            state = rows[states[-1]].get(origin, -1)
            if state < 0:
                raise NotParsed("no goto")
            states.append(state)
            if state == end_state:
                return values[-1]


def _only_child(children: list[Any]) -> Any:
    return children[0]
