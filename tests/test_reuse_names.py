"""interpreter/reuse_names.py: temporaries of a generated function whose uses do not overlap share a name;
the function computes the same. Each case is a function body before and the body expected after."""
import textwrap

import rulelang
from interpreter.reuse_names import reuse_names


def body(text):
    return textwrap.dedent(text).strip("\n").split("\n")


def run(lines, **env):
    src = "def f(G, p1):\n" + "\n".join("    " + line for line in lines) + "\n"
    scope = {}
    exec(compile(src, "<test>", "exec"), scope)  # (test data written here, never from a rule file)
    return scope["f"](env.get("G"), env.get("p1"))


MANY = [f"t{i} = p1 + {i}" for i in range(1, 13)] + ["return " + " + ".join(f"t{i}" for i in range(1, 13))]


def test_temporaries_in_use_at_once_keep_their_own_names():
    assert reuse_names(MANY, ["G", "p1"]) == MANY  # all twelve are read by the last line


def test_a_temporary_set_after_the_last_use_of_another_takes_its_name():
    lines = MANY[:-1] + ["t20 = t1 + t2 + t3 + t4 + t5 + t6 + t7 + t8 + t9 + t10 + t11 + t12", "t21 = t20 * 2",
                         "return t21"]
    out = reuse_names(lines, ["G", "p1"])
    # (not on the line of the other's last use: t20 keeps its name; t21 then takes t1's)
    assert out[-3:] == ["t20 = t1 + t2 + t3 + t4 + t5 + t6 + t7 + t8 + t9 + t10 + t11 + t12", "t1 = t20 * 2",
                        "return t1"]
    assert run(out, p1=1) == run(lines, p1=1) == 2 * sum(1 + i for i in range(1, 13))


def test_a_name_used_before_a_loop_and_in_it_is_in_use_to_the_loop_end():
    lines = MANY[:-1] + body("""
        s13 = 0
        h14 = t1 + t12
        for x15 in (1, 2, 3):
            t16 = x15 * h14
            s13 += t16
            t17 = t2 + t3 + t4 + t5 + t6 + t7 + t8 + t9 + t10 + t11
            s13 += t17
        return s13
        """)
    out = reuse_names(lines, ["G", "p1"])
    # t1's last use is h14's line, before the loop: t16, set in the loop, may take its name (each round sets
    # it before reading it); h14 is of another kind and read by every round
    assert run(out, p1=2) == run(lines, p1=2)
    renamed = dict(zip(lines, out))
    assert renamed["    t16 = x15 * h14"].strip().startswith("t1 = ")  # t1's last use is before the loop
    assert renamed["    s13 += t16"].strip() == "s13 += t1"


def test_a_loop_reading_a_name_set_before_it_keeps_that_name_apart():
    lines = MANY[:-1] + body("""
        s13 = 0
        for x14 in (1, 2, 3):
            s13 += t12
            t15 = x14 * 2
            s13 += t15
        return s13 + t1 + t2 + t3 + t4 + t5 + t6 + t7 + t8 + t9 + t10 + t11
        """)
    out = reuse_names(lines, ["G", "p1"])
    assert "t12 = t15" not in "\n".join(out) and run(out, p1=3) == run(lines, p1=3)
    assert all("t12 =" not in line for line in out[13:])  # t15 never takes t12: the next round reads t12


def test_strings_attributes_parameters_and_inner_functions_are_left_alone():
    lines = MANY[:-1] + ["t13 = G.t1 if G is not None else 't1 + t2'", "t14 = p1", "return t13"]
    out = reuse_names(lines, ["G", "p1"])
    assert out[-3].endswith("if G is not None else 't1 + t2'") and ".t1" in out[-3]
    assert "p1" in out[-2]
    inner = MANY[:-1] + ["def lam20(x21):", "    return x21 + t1", "t22 = lam20(t2)", "return t22"]
    assert reuse_names(inner, ["G", "p1"]) == inner


def test_the_largest_rule_functions_of_station_keep_a_few_dozen_locals():
    """Station's ship-action test has branches per kind of ship; before this pass it had 91 locals (27 after
    it; 41 since the optimiser writes `trade_ok` into its loop, whose parts computed before the loop stay
    in use to the loop's end)."""
    rs = rulelang.load("games/station.rules")
    rs.new_game(3, seed=0)
    src = rs.generated_source
    sizes = []
    for chunk in src.split("\ndef ")[1:]:
        if chunk.startswith("fn_"):
            code = compile("def " + chunk, "<gen>", "exec")
            fcode = next(c for c in code.co_consts if hasattr(c, "co_nlocals"))
            sizes.append(fcode.co_nlocals)
    assert sizes and max(sizes) <= 45, sorted(sizes)[-5:]
