#!/usr/bin/env python3
"""Exhaustive small-graph checker for format.md §8.4 rule 6 (removal).

Enumerates every key graph up to a size: the root H (signed by A; devices
A, B, C and the recovery key Q), then up to N-1 further keyrings, each with
one parent or a join of two concurrent keyrings, a signer among the keys
current on its parents' side (puppets included: a key enrolled anywhere may
sign where it is a member), and one action: rotate, remove one device,
enrol a new key, enrol an existing key (one listed anywhere in the graph but
not on the parents' side: a removed device knows the others' public keys --
eighth review R8-1), replace the recovery key (a device), or lock down two
or more devices (the recovery key). It drives this reader's own rule 6
(quire_reader.keyrings._rule_6) with model keyrings, and checks:

  P1  a device removed by a removal that stands (not cut, and no ancestor
      cut by a keyring off its removed member's side) is not a current
      member, and no keyring that member -- or a key it enrolled on its side
      (a puppet) -- signed concurrently with the removal is trusted, unless
      the recovery key signed on top of it; the one residual (P1w): such a
      keyring leads to a standing answer (a removal on that side), and then
      the removal is reported (removal_mutual or removal_tie);
  P2  no puppet of a standing removal is a current member (no residual);
      the oracle's puppets are computed here, not with the reader's
      *vouched for*: a key that a removed member or puppet enrolled and
      whose every enrolment outside R and its ancestors traces back,
      through the enrolers' signers, only to keys R removes (ninth review
      R9-1);
  P3  a removal the recovery key Q signed, which no recovery-signed keyring
      defies, is not cut (unless an ancestor is);
  P4  a keyring whose line (itself and its ancestors) only members never
      removed signed, and which replaces no recovery key, is trusted;
  P5  the outcome (cut, warnings, puppets) does not depend on file order;
  P6  a device removal whose line (itself and its ancestors) holds no
      keyring whose signer a concurrent keyring removes, and whose
      ancestors are trusted, is not cut (eighth review R8-1: an honest,
      undefied removal stands);
  P7  no key that a removal R or an ancestor of R lists is a puppet of R
      (eighth review R8-1: a key R saw is not its removed member's).

Usage: python3 check_removal_rule.py [N]      (N = 4: H and 3 more, 88,763
       python3 check_removal_rule.py -COUNT   graphs; -COUNT: random graphs
                                              of 5 to 7 keyrings, seed 7)
       python3 check_removal_rule.py -COUNT --expect P1=8,P1w=1
           (exit 0 only if the failures are exactly those counts)
       python3 check_removal_rule.py -COUNT --cycles [--expect P1=9]
           (COUNT random graphs in which a removed device's fork keys
           enrol each other -- cycle_graph, seed 9; ninth review R9-5)
       python3 check_removal_rule.py --scenarios
           (the properties on the graphs of format.md §8.4 scenarios 14
           and 15, which neither the size-4 run nor the random mode reach)
       python3 check_removal_rule.py --emit removal-rule-graphs.txt
           (the graphs the Swift evaluator replays, with this reader's outcome)
Exit status 1 when a property fails. The seventh review's findings R7-1 and
R7-2 fail P1/P2 on the rule before the seventh review; the eighth review's
R8-1 fails P4/P6/P7 on the rule before the eighth review (size 4 and the
random mode); the ninth review's R9-1 fails P2 on the rule before the ninth
review (--scenarios: six failures on the three graphs of scenario 15;
-1000 --cycles: P2 fails on 77 graphs, P1 on 55 and P1w on 3, where the
rule since fails only the nine pinned P1 graphs, format.md §8.4 Limits).
"""
import collections
import itertools
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quire_reader import keyrings as K  # noqa: E402



class Node:
    """A keyring as rule 6 sees it: parents, signer, members, recovery
    member, what it removes and what it first lists."""
    __slots__ = ('puppets', 'name', 'parents', 'signer', 'members', 'recovery', 'removed', 'added', 'action', 'fail', 'ix', 'mutual_warn')
    def __init__(self, name, parents, signer, members, recovery, removed, added, action, ix):
        self.name, self.parents, self.signer = name, parents, signer
        self.members, self.recovery, self.removed, self.added = members, recovery, removed, added
        self.action, self.fail, self.ix = action, None, ix
        self.puppets = set()
    @property
    def id(self): return self.name
    def removed_keys(self): return set(self.removed)
    def member_keys(self): return self.members
    def recovery_key(self): return self.recovery
    def signed_by_recovery(self, by_id):
        srcs = [by_id[p] for p in self.parents] or [self]
        return any(s.recovery == self.signer for s in srcs)
    def reject(self, code, detail=''):
        self.fail = 'cut' if detail.startswith('signed by') else 'parent'
    def __repr__(self): return self.name
    def describe(self):
        p = ','.join(self.parents) or '-'
        return f"{self.name}({p}) by {self.signer}: {self.action}"


def candidates(graph, anc):
    n = len(graph)
    name = 'K%d' % n
    psets = [(p,) for p in graph]
    for a, b in itertools.combinations(graph, 2):
        if a not in anc[b] and b not in anc[a]:
            psets.append((a, b))
    for ps in psets:
        A = set(ps).union(*(anc[p] for p in ps))
        removed_anc = set().union(*(p_.removed_keys() for p_ in A))
        pmembers = set().union(*(p.members for p in ps))
        current = sorted(m for m in pmembers if m not in removed_anc)
        precs = sorted({p.recovery for p in ps})
        for signer in current:
            rec = ps[0].recovery if ps[0].recovery not in removed_anc else None
            if rec is None:
                cands = [r for r in precs if r not in removed_anc]
                if not cands:
                    continue
                rec = cands[0]
            base = {m for m in current if m == rec or m not in precs}
            devices = sorted(m for m in base if m != rec)
            is_rec = signer in precs
            actions = [('rotate', (), ())]
            for m in devices:
                if m != signer:
                    actions.append(('remove ' + m, (m,), ()))
            actions.append(('enrol', (), ('E%d' % n,)))
            # R8-1: enrolling needs only a public key; any key of the graph
            # not on this side may be enrolled (by anyone, the removed too).
            known = set().union(*(g.members for g in graph))
            for k in sorted(known - pmembers - removed_anc):
                actions.append(('enrol existing ' + k, (), (k,)))
            if not is_rec:
                actions.append(('replace recovery', tuple(r for r in precs if r not in removed_anc), ('Q%d' % n,)))
            else:
                for k in range(2, len(devices) + 1):
                    for sub in itertools.combinations(devices, k):
                        actions.append(('lockdown ' + '+'.join(sub), sub, ()))
            for act, rem, add in actions:
                if act == 'replace recovery':
                    if not rem:
                        continue
                    mem = (base - {rec}) | set(add)
                    newrec = add[0]
                else:
                    mem = (base - set(rem)) | set(add)
                    newrec = rec
                node = Node(name, tuple(p.name for p in ps), signer, frozenset(mem), newrec, tuple(rem), tuple(add), act, n)
                yield node, set(ps).union(*(anc[p] for p in ps))


def extend(graph, anc, counter, max_nodes, out):
    out(graph, anc)
    if len(graph) >= max_nodes:
        return
    for node, node_anc in list(candidates(graph, anc)):
        anc[node] = node_anc
        graph.append(node)
        extend(graph, anc, counter, max_nodes, out)
        graph.pop()
        del anc[node]


def evaluate(graph, anc, rule6=None):
    by_id = {g.name: g for g in graph}
    for g in graph:
        g.fail = None
    for g in graph:
        g.puppets = set()
    ties = []
    mut = []
    try:
        out = (rule6 or K._rule_6)(list(graph), by_id, {g: anc[g] for g in graph}, ties, mut)
    except TypeError:
        out = (rule6 or K._rule_6)(list(graph), by_id, {g: anc[g] for g in graph}, ties)
    return out, ties + mut

def root():
    return Node('H', (), 'A', frozenset(['A', 'B', 'C', 'Q']), 'Q', (), ('A', 'B', 'C', 'Q'), 'root', 0)


def properties(graph, anc, out, ties, warned):
    """Returns the list of (property, detail) that fail."""
    fails = []
    T = [g for g in graph if g not in out]
    Tset = set(T)
    by = {g.name: g for g in graph}
    children = {g: [] for g in graph}
    for g in graph:
        for p in g.parents:
            children[by[p]].append(g)
    heads = [g for g in T if not any(c in Tset for c in children[g])]
    removed_T = set().union(*(g.removed_keys() | g.puppets for g in T))
    members = set().union(*(h.members for h in heads)) - removed_T
    def conc(a, b): return a is not b and a not in anc[b] and b not in anc[a]
    def rsigned(z):
        srcs = [by[p] for p in z.parents] or [z]
        return any(s.recovery == z.signer for s in srcs)
    all_removed = set().union(*(g.removed_keys() for g in graph))
    # P1/P2 per standing device removal
    direct = {g for g in graph if g.fail == 'cut'}
    for R in graph:
        devs = [m for m in R.removed if not m.startswith('Q')]
        if not devs or R in direct:
            continue
        side, puppets = set(), set()
        # R8-1: a key R saw (listed by R, an ancestor or a clean descendant:
        # parents R, ancestors or clean, signer a member R keeps or a key a
        # clean descendant enrolled) is never its removed member's.
        seen_by_R = set().union(*(x.members for x in anc[R] | {R}))
        legit, clean = set(R.members) - set(R.removed), set()
        for d in sorted((x for x in graph if R in anc[x]), key=lambda x: len(anc[x])):
            if d.signer in legit and all(by[q] is R or by[q] in anc[R] or by[q] in clean for q in d.parents):
                clean.add(d)
                legit |= set(d.added)
                seen_by_R |= set(d.members)
        # ... nor one that a key R does not remove brought in (ninth review
        # R9-1). Computed here from the other end, independently of the
        # reader's *vouched for* passes: the keys whose every enrolment
        # outside R and its ancestors traces back, through the enrolers'
        # signers, only to keys R removes -- the greatest set, found by
        # striking out, from every key R did not see, each key that a
        # keyring outside R's ancestors signed by a key not (or no longer)
        # in the set enrols, until none is struck. A key outside that set
        # is honest: a cycle of keys that enrol each other, all brought in
        # by R's removed member, stays in it (the least fixpoint of the
        # eighth review's rule never took them).
        traced = set(devs) | {k for E in graph for k in E.added if k not in seen_by_R}
        struck = True
        while struck:
            struck = False
            for E in graph:
                if E is R or E in anc[R] or E.signer in traced:
                    continue
                for k in E.added:
                    if k in traced and k not in devs:
                        traced.discard(k); struck = True
        def honest(k):
            return k not in traced
        grow = True
        while grow:
            grow = False
            for K in graph:
                if K not in side and conc(K, R) and (K.signer in devs or K.signer in puppets):
                    side.add(K); grow = True
            for K in list(side):
                for k in K.added:
                    if k not in puppets and k not in seen_by_R and not honest(k):
                        puppets.add(k); grow = True
        def exempt_rec(K):
            return any(z in Tset and rsigned(z) and z.signer not in puppets and (K is z or K in anc[z]) for z in graph)
        def exempt_mut(K):
            # the residual: K leads to an answer -- a standing removal on R's
            # removed member's side -- and R is reported
            return any(R2 in Tset and R2.removed and R2 in side and (K is R2 or K in anc[R2]) for R2 in graph) \
                or any(R2 in Tset and R2.removed and (K is R2 or K in anc[R2]) and any(Y in side for Y in [R2] + list(anc[R2])) for R2 in graph)
        # R stands unless an ancestor is cut by a removal off R's removed member's side
        def cutters(Y):
            return [X for X in graph if conc(X, Y) and (Y.signer in X.removed or (rsigned(X) and X.signer in Y.removed))]
        if any(Y in direct and any(X not in side for X in cutters(Y)) for Y in anc[R]):
            continue
        for m in devs:
            if m in members:
                fails.append(('P1', f'{m}, removed by {R.name}, is a current member'))
        for K in side:
            if K in Tset and not exempt_rec(K):
                if exempt_mut(K):
                    if R not in warned:
                        fails.append(('P1w', f'{K.name} stands as an answer to {R.name}, no warning'))
                else:
                    fails.append(('P1', f'{K.name} (on {R.name}\'s removed member\'s side) is trusted'))
        for p in puppets & members:
            src = [K for K in side if p in K.added][0]
            if not exempt_rec(src):
                fails.append(('P2', f'puppet {p} (enrolled by {src.name}) stays a member'))
    # P3: a removal signed by the original recovery key, no recovery-signed keyring defies it
    for R in graph:
        if R.removed and rsigned(R) and R.signer == 'Q' and R in out and not (anc[R] & out):
            defied = any(conc(K, R) and rsigned(K) and (K.signer in R.removed or R.signer in K.removed) for K in graph)
            # a replacement concurrent with R that removes Q (K removes R's signer) counts only when recovery-signed
            if not defied:
                fails.append(('P3', f'recovery removal {R.name} is cut'))
    # P4: the honest line survives
    for K in graph:
        line = [K] + [a for a in anc[K] if a.parents]
        if all(x.signer not in all_removed for x in line) and all(x.action != 'replace recovery' for x in line) and K in out:
            fails.append(('P4', f'honest {K.name} is cut'))
    # P6: a device removal whose line (itself and its ancestors) holds no
    # contested keyring -- none whose signer a concurrent keyring removes --
    # and whose ancestors are trusted, stands (a replacement of the
    # recovery key loses to every concurrent keyring by design: keys.md
    # §6.3)
    def contested(x):
        return any(conc(y, x) and x.signer in y.removed for y in graph)
    for R in graph:
        if R.removed and R.action != 'replace recovery' and R in out and not (anc[R] & out):
            if not any(contested(x) for x in [R] + [a for a in anc[R] if a.parents]):
                fails.append(('P6', f'honest removal {R.name} is cut'))
    # P7: a key R saw is not a puppet of R
    for R in graph:
        saw = R.puppets & set().union(*(x.members for x in anc[R] | {R}))
        if saw:
            fails.append(('P7', f'{",".join(sorted(saw))}, listed where {R.name} saw it, is its puppet'))
    return fails

def cycle_graph(rng):
    """A random graph in which a removed device's fork keys enrol each
    other (ninth review R9-5): after an optional honest keyring, a removal
    R of a device V; then, outside R's descendants, V enrols new keys
    P1, P2 (sometimes P3; sometimes P1 enrols the next instead of V); then
    each fork key enrols another that is not yet a member on its side -- a
    cycle P1 -> P2 -> ... -> P1, sometimes with a link left out, sometimes
    on a join; then an answer (V or a fork key removes R's signer, or
    another member), or none; then up to two random keyrings (a join, a
    rotation by a fork key, an honest enrolment of a fork key...).
    Returns (graph, anc), or None when a step found no keyring to add."""
    h = root()
    graph, anc = [h], {h: set()}

    def add(pred):
        cs = [(n, a) for n, a in candidates(graph, anc) if pred(n, a)]
        if not cs:
            return None
        node, na = rng.choice(cs)
        anc[node] = na
        graph.append(node)
        return node

    for _ in range(rng.choice([0, 0, 1])):
        add(lambda n, a: n.action in ('rotate', 'enrol'))
    R = add(lambda n, a: n.action.startswith('remove '))
    if R is None:
        return None
    V = R.removed[0]

    def off(a):                      # not R, not a descendant of R
        return R not in a

    keys = []
    for i in range(rng.choice([2, 2, 2, 3])):
        signers = [V] + (keys[-1:] if rng.random() < 0.3 else [])
        node = add(lambda n, a: n.signer in signers and n.action == 'enrol' and off(a))
        if node is None:
            return None
        keys.append(node.added[0])
    order = keys[:]
    for i, k in enumerate(order):
        if rng.random() < 0.15:      # a link of the cycle left out
            continue
        target = order[(i + 1) % len(order)] if rng.random() < 0.8 else rng.choice([x for x in order if x != k])
        add(lambda n, a: n.signer == k and n.action == 'enrol existing ' + target and off(a))
    answer = rng.random()
    signers = [V] + keys
    if answer < 0.45:                # a mutual answer: remove R's signer
        add(lambda n, a: n.signer in signers and n.removed == (R.signer,) and off(a))
    elif answer < 0.75:              # an answer removing another member
        add(lambda n, a: n.signer in signers and n.action.startswith('remove ') and off(a))
    for _ in range(rng.choice([0, 1, 2])):
        add(lambda n, a: True)
    return graph, anc


def run(max_nodes, rule6=None, show=5, stop_after=None, cycles=False):
    count = 0
    failing = collections.Counter()
    examples = collections.defaultdict(list)
    def visit(graph, anc):
        nonlocal count
        count += 1
        out, ties = evaluate(graph, anc, rule6)
        warned = set(ties) | set(getattr(out, 'warned', ()))
        fl = properties(graph, anc, out, ties, warned)
        # P5: order independence
        saved = [set(g.puppets) for g in graph]
        rev = list(reversed(graph))
        by_id = {g.name: g for g in graph}
        for g in graph: g.puppets = set()
        t2 = []
        try:
            out2 = (rule6 or K._rule_6)(rev, by_id, {g: anc[g] for g in graph}, t2, t2)
        except TypeError:
            out2 = (rule6 or K._rule_6)(rev, by_id, {g: anc[g] for g in graph}, t2)
        if set(out2) != set(out) or set(t2) != set(ties) or any(g.puppets != pp for g, pp in zip(graph, saved)):
            fl.append(('P5', 'order changes the outcome'))
        seen = set()
        for p, d in fl:
            if p in seen: continue
            seen.add(p)
            failing[p] += 1
            if len(examples[p]) < show:
                examples[p].append(('; '.join(g.describe() for g in graph[1:]), d, sorted(x.name for x in out), [t.name for t in ties]))
    h = root()
    if cycles:
        import random
        rng = random.Random(9)
        made = 0
        while made < -max_nodes:
            got = cycle_graph(rng)
            if got is not None:
                made += 1
                visit(*got)
    elif max_nodes > 0:
        extend([h], {h: set()}, None, max_nodes, visit)
    else:
        import random
        rng = random.Random(7)
        for _ in range(-max_nodes):
            graph, anc = [h], {h: set()}
            size = rng.choice([5, 6, 6, 7])
            while len(graph) < size:
                node, na = rng.choice(list(candidates(graph, anc)))
                anc[node] = na
                graph.append(node)
            visit(graph, anc)
    return count, failing, examples

def scenario(specs, root_signer='A', root_members=('A', 'B', 'C', 'Q')):
    """A graph given keyring by keyring: (name, parents, signer, members,
    recovery, removed, action), after a root H."""
    h = Node('H', (), root_signer, frozenset(root_members), 'Q', (), tuple(root_members), 'root', 0)
    graph, anc, by = [h], {h: set()}, {'H': h}
    for i, (name, parents, signer, members, rec, removed, action) in enumerate(specs, 1):
        ps = [by[q] for q in parents]
        pmembers = set().union(*(q.members for q in ps))
        node = Node(name, tuple(parents), signer, frozenset(members), rec, tuple(removed),
                    tuple(sorted(set(members) - pmembers)), action, i)
        anc[node] = set(ps).union(*(anc[q] for q in ps))
        graph.append(node)
        by[name] = node
    return graph, anc


def r8_scenarios():
    """format.md §8.4 scenario 14 (eighth review R8-1): a removed device
    enrols honest keys on its fork -- (a) a device enrolled after its fork
    point, (b) its remover, (c) a new recovery key, (d) both removers of two
    concurrent removals, (e) a device enrolled concurrently with the
    removal."""
    M, MD = {'A', 'B', 'C', 'Q'}, {'A', 'B', 'C', 'D', 'Q'}
    return [
        scenario([('EN', ['H'], 'C', MD, 'Q', (), 'enrol'),
                  ('R', ['EN'], 'A', MD - {'B'}, 'Q', ('B',), 'remove B'),
                  ('X', ['H'], 'B', MD, 'Q', (), 'enrol existing D'),
                  ('K2', ['R'], 'D', MD - {'B'}, 'Q', (), 'rotate')]),
        scenario([('EN', ['H'], 'A', M, 'Q', (), 'enrol'),
                  ('R', ['EN'], 'C', M - {'B'}, 'Q', ('B',), 'remove B'),
                  ('X', ['H'], 'B', M, 'Q', (), 'enrol existing C'),
                  ('K2', ['R'], 'C', M - {'B'}, 'Q', (), 'rotate'),
                  ('K3', ['K2'], 'A', M - {'B'}, 'Q', (), 'rotate')], root_members=('A', 'B', 'Q')),
        scenario([('RP', ['H'], 'A', {'A', 'B', 'C', 'Q2'}, 'Q2', ('Q',), 'replace recovery'),
                  ('R', ['RP'], 'A', {'A', 'C', 'Q2'}, 'Q2', ('B',), 'remove B'),
                  ('X', ['H'], 'B', M | {'Q2'}, 'Q', (), 'enrol existing Q2'),
                  ('K2', ['R'], 'Q2', {'A', 'C', 'Q2'}, 'Q2', (), 'rotate')]),
        scenario([('EN', ['H'], 'B', M, 'Q', (), 'enrol'),
                  ('R1', ['EN'], 'A', M - {'B'}, 'Q', ('B',), 'remove B'),
                  ('R2', ['EN'], 'C', M - {'B'}, 'Q', ('B',), 'remove B'),
                  ('X', ['H'], 'B', M, 'Q', (), 'enrol existing A+C')], root_signer='B', root_members=('B', 'Q')),
        scenario([('R', ['H'], 'A', M - {'B'}, 'Q', ('B',), 'remove B'),
                  ('EN', ['H'], 'C', MD, 'Q', (), 'enrol'),
                  ('X', ['H'], 'B', MD, 'Q', (), 'enrol existing D'),
                  ('J', ['R', 'EN'], 'A', MD - {'B'}, 'Q', (), 'rotate'),
                  ('K2', ['J'], 'D', MD - {'B'}, 'Q', (), 'rotate')]),
    ]


def r9_scenarios():
    """format.md §8.4 scenario 15 (ninth review R9-1): a removed device
    enrols two keys on its fork, each of which then enrols the other, and
    answers -- (a) a mutual answer, (b) the same, then an honest join and a
    rotation by one of the keys, (c) a tie (scenario 12)."""
    M = {'A', 'B', 'C', 'Q'}
    S = M | {'P1', 'P2'}
    cycle = [('X1', ['H'], 'B', M | {'P1'}, 'Q', (), 'enrol P1'),
             ('X2', ['H'], 'B', M | {'P2'}, 'Q', (), 'enrol P2'),
             ('X3', ['X1'], 'P1', S, 'Q', (), 'enrol existing P2'),
             ('X4', ['X2'], 'P2', S, 'Q', (), 'enrol existing P1')]
    answer = [('R', ['H'], 'A', M - {'B'}, 'Q', ('B',), 'remove B')] + cycle + [
        ('X', ['X3', 'X4'], 'B', S - {'A'}, 'Q', ('A',), 'remove A')]
    return [
        scenario(answer),
        scenario(answer + [('J', ['R', 'X'], 'C', {'C', 'Q', 'P1', 'P2'}, 'Q', (), 'join'),
                           ('K', ['J'], 'P1', {'C', 'Q', 'P1', 'P2'}, 'Q', (), 'rotate')]),
        scenario([('Y1', ['H'], 'C', M, 'Q', (), 'rotate'),
                  ('R0', ['Y1'], 'A', M - {'B'}, 'Q', ('B',), 'remove B')] + cycle + [
                  ('R2', ['X3', 'X4'], 'P1', S - {'C'}, 'Q', ('C',), 'remove C')]),
    ]


def check_scenarios():
    """The properties on the graphs of scenarios 14 and 15, which the
    exhaustive size (four keyrings) and the random mode do not reach (the
    cycle of scenario 15 takes seven). Returns the failures."""
    fails = []
    for i, (graph, anc) in enumerate(r8_scenarios() + r9_scenarios()):
        for g in graph:
            g.fail = None
            g.puppets = set()
        out, ties = evaluate(graph, anc)
        warned = set(ties) | set(getattr(out, 'warned', ()))
        fails += [(p, 'scenario graph %d: %s' % (i, d)) for p, d in properties(graph, anc, out, ties, warned)]
    return fails


def enrols_a_key_the_removal_saw(graph, anc):
    """A keyring signed by a key removal R removes, outside R's ancestors,
    enrols a key R or an ancestor lists (what R8-1 exploited)."""
    for R in graph:
        if R.removed:
            saw = set().union(*(x.members for x in anc[R] | {R}))
            if any(K is not R and K not in anc[R] and K.signer in R.removed and set(K.added) & saw for K in graph):
                return True
    return False


def emit(path):
    """Writes the graphs the Swift evaluator replays (RemovalRuleReplayTests):
    every graph of up to three keyrings, every graph of four that ends
    with a warning (a tie or a mutual answer), every fifth graph of four in
    which a removed member's keyring enrols a key the removal saw (eighth
    review R8-1), and the graphs of format.md §8.4 scenario 14, with this
    reader's outcome.
    One line per graph: its keyrings (name/parents/signer/members/recovery/
    removed/reason, `;` between keyrings), then `=>` the trusted keyrings,
    `|` the removals reported as a tie, `|` those reported as mutual."""
    lines = []
    saw_count = [0]

    def visit(graph, anc, always=False):
        by_id = {g.name: g for g in graph}
        for g in graph:
            g.fail = None
            g.puppets = set()
        ties, mutuals = [], []
        out = K._rule_6(list(graph), by_id, {g: anc[g] for g in graph}, ties, mutuals)
        if len(graph) == 4 and not ties and not mutuals and not always:
            if not enrols_a_key_the_removal_saw(graph, anc):
                return
            saw_count[0] += 1
            if saw_count[0] % 5:
                return
        rings = ';'.join('/'.join([g.name, ','.join(g.parents), g.signer, ','.join(sorted(g.members)), g.recovery,
                                   ','.join(g.removed), 'recovery' if g.action == 'replace recovery' else 'test'])
                         for g in graph)
        names = lambda xs: ','.join(sorted(x.name for x in xs))
        lines.append('%s => %s | %s | %s' % (rings, names(g for g in graph if g not in out), names(ties), names(mutuals)))
    h = root()
    extend([h], {h: set()}, None, 4, visit)
    for graph, anc in r8_scenarios() + r9_scenarios():
        visit(graph, anc, always=True)
    with open(path, 'w') as f:
        f.write('# Generated by check_removal_rule.py --emit (format.md §8.4 rule 6); '
                'replayed by Tests/QuireKeysTests/RemovalRuleReplayTests.swift.\n')
        f.write('\n'.join(lines) + '\n')
    print('graphs', len(lines))


if __name__ == '__main__':
    if len(sys.argv) > 2 and sys.argv[1] == '--emit':
        emit(sys.argv[2])
        sys.exit(0)
    if len(sys.argv) > 1 and sys.argv[1] == '--scenarios':
        failed = check_scenarios()
        print('scenario graphs', len(r8_scenarios()) + len(r9_scenarios()), 'failures', len(failed))
        for f in failed:
            print('   ', f)
        sys.exit(1 if failed else 0)
    args = sys.argv[1:]
    # --cycles (with -COUNT): random graphs in which a removed device's
    # fork keys enrol each other (cycle_graph, ninth review R9-5).
    cycles = '--cycles' in args
    args = [a for a in args if a != '--cycles']
    n = int(args[0]) if args else 4
    # --expect P1=8,P1w=1: the failures the random mode is known to find
    # (the residual classes of format.md §8.4 Limits), pinned so that a new
    # class shows up as a difference (eighth review R8-4).
    expect = None
    if len(args) > 2 and args[1] == '--expect':
        expect = {k: int(v) for k, v in (x.split('=') for x in args[2].split(',') if x)}
    if cycles and n >= 0:
        sys.exit('--cycles takes -COUNT')
    count, failing, ex = run(n, cycles=cycles)
    print('configurations', count)
    for p in sorted(failing):
        print(p, failing[p])
        for e in ex[p]:
            print('   ', e)
    if expect is not None:
        if dict(failing) != expect:
            print('expected', expect, 'found', dict(failing))
            sys.exit(1)
        print('as expected (format.md §8.4 Limits)')
        sys.exit(0)
    sys.exit(1 if failing else 0)
