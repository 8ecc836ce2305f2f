"""How rulelang/lalr_loop.py reads the next token in each parser state, as Lark's contextual lexer does,
compiling fewer regular expressions.

Lark's contextual lexer keeps, for each set of terminals a parser state accepts, a lexer whose scanner
is one regular expression: the terminals of the set as alternatives, in Lark's order (priority, longest
possible match, length, name), except the keyword strings a name pattern also matches (these are found
by matching the name, then looking the text up among the keywords). The first alternative that
matches wins. Compiling that expression for each of the hundred or so sets a file meets costs more than
the rest of lexing a large file.

Lark's root lexer has the same kind of scanner for all terminals at once. When the alternatives of a
state's scanner are all alternatives of the root scanner (its keyword strings too are folded into the
names there), they come in the same order, so wherever the root scanner's first matching alternative
is one of the state's, the state's scanner picks that same alternative with the same text: every
alternative before it in the state's order comes before it in the root's order, and did not match.
Then the root's match is used, with the state's own keyword lookup. In every other case (a terminal
the state does not try, or a state whose scanner has alternatives the root's lacks, such as keywords
where no name may stand) the state's own scanner is built, as Lark builds it, and used.
"""
from __future__ import annotations

from lark.lexer import UnlessCallback


class Scanners:
    """The scanners of one Lark ``ContextualLexer``, state by state, built on first use."""

    def __init__(self, contextual):
        self.lexers = contextual.lexers  # parser state -> Lark's lexer for it
        self.root = contextual.root_lexer
        self.shared = None  # (match, names of its alternatives, {name terminal: keyword names}), on first use
        self.by_lexer = {}  # id(Lark's lexer) -> (lexer, what for_state gives), shared by the states sharing it
        self.own_by_lexer = {}  # id(Lark's lexer) -> (lexer, what own gives)

    def for_state(self, state):
        """(match, alternatives, keywords, other callbacks, newline terminals, ignored terminals) for
        the lexer of ``state``. ``match(text, pos)``: a match whose ``lastgroup`` is the terminal;
        ``alternatives``: None when ``match`` is the state's own scanner, else the terminals the state
        tries (a match of another terminal must be read again with ``own``); ``keywords``:
        {terminal: {text: keyword terminal}}, Lark's test of a name against the keywords (a full match
        of plain strings is equality); other callbacks by terminal."""
        lexer = self.lexers[state]
        found = self.by_lexer.get(id(lexer))
        if found is None:
            scan = self._shared_scan(lexer)
            if scan is None:
                match, keywords, others = self._own_scan(lexer)
                scan = (match, None, keywords, others, *_line_sets(lexer))
            found = (lexer, scan)
            self.by_lexer[id(lexer)] = found
        return found[1]

    def own(self, state):
        """(match, keywords, other callbacks) of the state's own scanner (built as Lark builds it)."""
        return self._own_scan(self.lexers[state])

    def _own_scan(self, lexer):
        found = self.own_by_lexer.get(id(lexer))
        if found is None:
            scanner = lexer.scanner  # builds lexer.callback too
            mres = scanner._mres
            if len(mres) == 1:
                match = mres[0].match
            else:
                def match(text, pos, _mres=mres):
                    for mre in _mres:
                        m = mre.match(text, pos)
                        if m:
                            return m
                    return None
            keywords, others = {}, {}
            for kind, callback in lexer.callback.items():
                words = _keyword_table(callback.scanner.terminals) if callback.__class__ is UnlessCallback else None
                if words is None or lexer.g_regex_flags or lexer.use_bytes:
                    others[str(kind)] = callback
                else:
                    keywords[str(kind)] = words
            found = (lexer, (match, keywords, others))
            self.own_by_lexer[id(lexer)] = found
        return found[1]

    def _shared(self):
        if self.shared is None:
            root = self.root
            mres = root.scanner._mres  # builds root.callback too
            names = frozenset(str(t.name) for t in root.scanner.terminals)
            unless = {}
            for kind, callback in root.callback.items():
                if callback.__class__ is not UnlessCallback:
                    unless = None
                    break
                unless[str(kind)] = [str(t.name) for t in callback.scanner.terminals]
            usable = (len(mres) == 1 and unless is not None and not root.user_callbacks
                      and not root.g_regex_flags and not root.use_bytes)
            self.shared = (mres[0].match, names, unless) if usable else (None, None, None)
        return self.shared

    def _shared_scan(self, lexer):
        """What for_state gives for ``lexer`` read with the root scanner, or None when it cannot be."""
        match, root_names, unless = self._shared()
        if match is None or lexer.user_callbacks or lexer.g_regex_flags != self.root.g_regex_flags \
                or lexer.use_bytes:
            return None
        terms = {str(t.name): t for t in lexer.terminals}
        # the keyword strings this lexer folds into its name patterns, as Lark's _create_unless decides
        # (same priority, and the name pattern fully matches the string: both found in the root's
        # lexer, which has every terminal)
        folded, keywords = set(), {}
        for kind, strings in unless.items():
            regex = terms.get(kind)
            if regex is None:
                continue
            mine = [terms[s] for s in strings if s in terms]
            if not mine:
                continue
            words = _keyword_table(mine)
            if words is None:
                return None
            keywords[kind] = words
            folded.update(str(t.name) for t in mine if t.pattern.flags <= regex.pattern.flags)
        alternatives = frozenset(name for name in terms if name not in folded)
        if not alternatives <= root_names:
            return None
        return (match, alternatives, keywords, {}, *_line_sets(lexer))


def _line_sets(lexer):
    return frozenset(map(str, lexer.newline_types)), frozenset(map(str, lexer.ignore_types))


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
