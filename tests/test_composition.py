"""Several releases of the same people checked together (issue 40, item 1): the candidate values left in every
release (Ganta, Kasiviswanathan and Smith 2008) and the joint random-match test, against plain brute force."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from conftest import PAPER, clinic
from publisher.cli import main as publisher
from verifier.attacks.composition import joint_candidates, joint_random_match
from verifier.cli import main as verifier
from verifier.releases.joint import PROPAGATION
from verifier.core.permutation import RankSpace, compute_record_distance


def test_candidate_values_are_intersected_and_their_shares_multiplied():
    assert joint_candidates([{"flu": 0.5, "HIV": 0.5}, {"HIV": 0.5, "cancer": 0.5}]) == {"HIV": 1.0}
    both = joint_candidates([{"a": 0.75, "b": 0.25}, {"a": 0.5, "b": 0.25, "c": 0.25}])
    assert both == pytest.approx({"a": 0.375 / 0.4375, "b": 0.0625 / 0.4375}) and list(both) == ["a", "b"]
    assert joint_candidates([{"a": 1.0}, {"b": 1.0}]) == {}  # not her releases, or not her record
    assert joint_candidates([{"a": 0.2, "b": 0.8}]) == {"a": 0.2, "b": 0.8}  # one release: its own shares


def _brute(ys: list[np.ndarray], mine: list[int]) -> tuple[float, list[float]]:
    """Every random record of position tuples, its distance in each release by the subject's own scan."""
    n, m = ys[0].shape
    joint, each = 0, [0] * len(ys)
    sorted_cols = [np.sort(y, axis=0) for y in ys]
    spaces = [RankSpace(y) for y in ys]
    for positions in itertools.product(range(n), repeat=m):
        hits = [compute_record_distance(space, cols[list(positions), range(m)]).distance <= d
                for space, cols, d in zip(spaces, sorted_cols, mine)]
        joint += all(hits)
        each = [e + h for e, h in zip(each, hits)]
    return joint / n ** m, [e / n ** m for e in each]


@pytest.mark.parametrize("ties", [False, True])
def test_the_joint_random_match_test_is_the_brute_force_count(ties):
    """On random tables of 6 records and 3 attributes, with and without ties: the exhaustive joint test counts
    what the plain scan counts, release by release and jointly; a Monte Carlo run lands near it."""
    rng = np.random.default_rng(40 + ties)
    for _ in range(3):
        x = rng.integers(0, 3, size=(6, 3)).astype(float) if ties else rng.normal(size=(6, 3))
        ys = [x + rng.normal(scale=0.6, size=x.shape) if not ties else rng.permutation(x, axis=0) for _ in range(2)]
        her = x[0]
        mine = [compute_record_distance(RankSpace(y), her).distance for y in ys]
        exact = joint_random_match([RankSpace(y) for y in ys], mine)
        p_joint, p_each = _brute(ys, mine)
        assert exact.method == "exhaustive" and exact.total == 6 ** 3
        assert exact.p_joint == pytest.approx(p_joint, abs=1e-15) and exact.p_each == pytest.approx(p_each)
        assert exact.p_joint <= min(exact.p_each)
        sampled = joint_random_match([RankSpace(y) for y in ys], mine, samples=20_000, seed=3, exhaustive_limit=10)
        assert sampled.method == "monte_carlo" and abs(sampled.p_joint - p_joint) < 0.03


def _paper_release(root, seed: int, keys):
    out = root / f"paper-{seed}"
    assert publisher(["release", "--input", str(PAPER / "original.csv"), "--method", "additive_noise", "--param",
                      "relative_sd=0.8", "--then", "reverse_mapping", "--samples", "200", "--seed", str(seed),
                      "--allow-degenerate", "--key", str(keys / "private.pem"), "--dataset-id", "paper",
                      "--release-version", str(seed), "--out", str(out)]) == 0
    return out


def test_paper_003_s_table_1_released_twice_gives_p_joint_at_most_each_p(tmp_path, capsys):
    """Two releases of Table 1 with different seeds: each release's p_j is its own exact random-match p-value
    (verifier check), and p_joint <= min(p1, p2) for every subject of the table."""
    assert publisher(["keygen", "--out", str(tmp_path / "keys"), "--unencrypted"]) == 0
    releases = [_paper_release(tmp_path, seed, tmp_path / "keys") for seed in (1, 2)]
    header, *rows = (PAPER / "original.csv").read_text().splitlines()
    for row in rows[:4]:
        (tmp_path / "me.json").write_text(json.dumps(dict(zip(header.split(","), map(float, row.split(","))))))
        capsys.readouterr()
        own = []
        for release in releases:
            assert verifier(["check", str(release), "--key", str(tmp_path / "keys" / "public.pem"), "--record",
                             str(tmp_path / "me.json"), "--json"]) == 0
            own.append(json.loads(capsys.readouterr().out)["p_value"])
        assert verifier(["joint", *map(str, releases), "--key", str(tmp_path / "keys" / "public.pem"), "--record",
                         str(tmp_path / "me.json"), "--json"]) == 0
        joint = json.loads(capsys.readouterr().out)
        assert joint["random_method"] == "exhaustive" and joint["random_records"] == 20 ** 3
        assert joint["p_each"] == pytest.approx(own, abs=1e-15) and joint["p_joint"] <= min(own)


def _hospital(tmp_path) -> list:
    """The literature's two 2-anonymous hospital releases, as a tool other than ours wrote them: her class is
    {HIV, flu} in one and {HIV, cancer} in the other."""
    (tmp_path / "original.csv").write_text("age,sex,disease\n34,F,HIV\n36,F,flu\n31,M,cancer\n45,M,cold\n")
    (tmp_path / "schema.json").write_text(json.dumps({"attributes": [
        {"name": "age", "kind": "numeric", "role": "quasi_identifier"},
        {"name": "sex", "kind": "nominal", "role": "quasi_identifier", "categories": ["F", "M"]},
        {"name": "disease", "kind": "nominal", "role": "sensitive", "categories": ["HIV", "cancer", "cold", "flu"]}]}))
    (tmp_path / "a.csv").write_text("age,sex,disease\n30-39,F,HIV\n30-39,F,flu\n30-49,M,cancer\n30-49,M,cold\n")
    (tmp_path / "b.csv").write_text("age,sex,disease\n30-34,*,HIV\n35-49,*,flu\n30-34,*,cancer\n35-49,*,cold\n")
    (tmp_path / "me.json").write_text(json.dumps({"age": 34, "sex": "F", "disease": "HIV"}))
    assert publisher(["keygen", "--out", str(tmp_path / "keys"), "--unencrypted"]) == 0
    out = []
    for name in ("a", "b"):
        assert publisher(["release", "--input", str(tmp_path / "original.csv"), "--schema",
                          str(tmp_path / "schema.json"), "--anonymized", str(tmp_path / f"{name}.csv"),
                          "--produced-by", "a hospital's tool 1.0", "--key", str(tmp_path / "keys" / "private.pem"),
                          "--dataset-id", f"hospital-{name}", "--out", str(tmp_path / name)]) == 0
        out.append(tmp_path / name)
    return out


def test_two_2_anonymous_releases_intersect_to_her_disease(tmp_path, capsys):
    """{flu, HIV} and {HIV, cancer} leave {HIV}: exposed together, at risk (a group of 2) in each alone; the
    headline says the releases together tell more than either."""
    releases = _hospital(tmp_path)
    capsys.readouterr()
    argv = ["joint", *map(str, releases), "--key", str(tmp_path / "keys" / "public.pem"), "--record",
            str(tmp_path / "me.json")]
    assert verifier([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    entry = out["attribute_disclosure"]["disease"]
    assert entry["left"] == {"HIV": 1.0} and entry["risk"] == 1.0 and entry["each"] == [0.5, 0.5]
    assert entry["prior"] == 0.25 and entry["beta"] == 3.0
    assert [r["level_alone"] for r in out["releases"]] == ["at_risk", "at_risk"]
    assert [r["class_size"] for r in out["releases"]] == [2, 2] and out["p_joint"] is None
    verdict = out["verdict"]
    assert verdict["level"] == "exposed" and verdict["rule"] == "value_near_certain"
    assert verdict["headline"].startswith("Together these 2 releases tell more about you than any one of them "
                                          "(at risk, at risk alone): Your disease can be guessed with certainty "
                                          "from these releases together")
    assert verifier(argv) == 0
    text = capsys.readouterr().out
    assert "Your disease: 1 candidate value left in every release, HIV (100%)" in text
    assert text.count("\nOK: ") + text.startswith("OK: ") == 2
    assert verifier([*argv[:2], "--key", argv[4], "--record", argv[6]]) == 2  # one release is no joint check
    assert "a joint check takes two releases or more" in capsys.readouterr().err
    import verifier as api  # a notebook's joint check is the command line's

    assert api.check_jointly(releases, tmp_path / "keys" / "public.pem",
                             {"age": 34, "sex": "F", "disease": "HIV"}) == out


def test_ganta_s_intersection_pins_down_people_of_two_k_anonymous_parts_of_adult():
    """Two overlapping parts of the Adult sample, k-anonymized independently by Mondrian: a share of the people
    in both has its occupation pinned down, falling as k grows; with 3 distinct occupations in every class
    (l-diversity) some still are."""
    from experiments.adult import load_adult
    from experiments.composition import pinned_share

    frame, _ = load_adult(True)
    shares = [pinned_share(frame, k)[0] for k in (2, 5, 10)]
    assert shares[0] > shares[1] > shares[2] > 0, shares
    assert 0 < pinned_share(frame, 2, 3)[0] < shares[0]


def _external(tmp_path, name: str, original: str, published: str) -> str:
    """A generalized release of ``original`` (CSV text) as another tool wrote it (``published``)."""
    (tmp_path / f"{name}-original.csv").write_text(original)
    (tmp_path / f"{name}.csv").write_text(published)
    assert publisher(["release", "--input", str(tmp_path / f"{name}-original.csv"), "--schema",
                      str(tmp_path / "schema.json"), "--anonymized", str(tmp_path / f"{name}.csv"),
                      "--produced-by", "a hospital's tool 1.0", "--key", str(tmp_path / "keys" / "private.pem"),
                      "--dataset-id", "ward", "--release-version", name[-1], "--out", str(tmp_path / name)]) == 0
    return str(tmp_path / name)


def test_m_invariance_s_critical_absence_leaks_under_plain_re_publication_only(tmp_path, capsys):
    """Xiao and Tao (SIGMOD 2007), their Bob: in the first release he shares a 2-diverse group with Alice {flu,
    dyspepsia}; Alice leaves. Re-published 2-diverse with Carol {flu, gastritis}, the intersection leaves flu:
    exposed. Re-published m-invariant (his group keeps its signature {flu, dyspepsia}, with Eve who joined), it
    leaves both: the joint check says no more than either release alone."""
    diseases = ["bronchitis", "dyspepsia", "flu", "gastritis"]
    (tmp_path / "schema.json").write_text(json.dumps({"attributes": [
        {"name": "age", "kind": "numeric", "role": "quasi_identifier"},
        {"name": "disease", "kind": "nominal", "role": "sensitive", "categories": diseases}]}))
    assert publisher(["keygen", "--out", str(tmp_path / "keys"), "--unencrypted"]) == 0
    first = _external(tmp_path, "r1", "age,disease\n30,flu\n32,dyspepsia\n50,gastritis\n55,bronchitis\n",
                      "age,disease\n30-34,flu\n30-34,dyspepsia\n50-59,gastritis\n50-59,bronchitis\n")
    plain = _external(tmp_path, "p2", "age,disease\n30,flu\n36,gastritis\n55,bronchitis\n58,dyspepsia\n",
                      "age,disease\n30-39,flu\n30-39,gastritis\n50-59,bronchitis\n50-59,dyspepsia\n")
    invariant = _external(tmp_path, "m2", "age,disease\n30,flu\n36,gastritis\n55,bronchitis\n33,dyspepsia\n",
                          "age,disease\n30-34,flu\n35-59,gastritis\n35-59,bronchitis\n30-34,dyspepsia\n")
    (tmp_path / "bob.json").write_text(json.dumps({"age": 30, "disease": "flu"}))
    found = {}
    for second in (plain, invariant):
        capsys.readouterr()
        assert verifier(["joint", first, second, "--key", str(tmp_path / "keys" / "public.pem"), "--record",
                         str(tmp_path / "bob.json"), "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        found[second] = (out["attribute_disclosure"]["disease"]["left"], out["verdict"]["level"],
                         [r["level_alone"] for r in out["releases"]], PROPAGATION in out["verdict"]["lines"])
    assert found[plain] == ({"flu": 1.0}, "exposed", ["at_risk", "at_risk"], False)
    # two values left in two releases of groups: her report says the named intruder may pin her through her
    # group-mates, which her own check cannot see (issue 50, item 2)
    assert found[invariant] == ({"dyspepsia": 0.5, "flu": 0.5}, "at_risk", ["at_risk", "at_risk"], True)


def _sample(rng: np.random.Generator, weights: np.ndarray) -> np.ndarray:
    """One draw per row of ``weights`` (each row proportional to a distribution)."""
    cumulative = np.cumsum(weights / weights.sum(axis=1, keepdims=True), axis=1)
    return np.minimum((cumulative < rng.random((weights.shape[0], 1))).sum(axis=1), weights.shape[1] - 1)


def _simulated_joint_rr(rng, pi, qi_ps, s_ps, cell, draws):
    """Result 1's event over several releases, drawn ``draws`` times: a record of her true QI group has her value
    ``u``; each release randomizes her QIs and value afresh; the intruder who sees every copy samples her QIs from
    their posterior (prior ``pi_QI``) and her value from its posterior (prior her group's ``c[a, .]``)."""
    from verifier.attacks.disclosure import keep_matrix

    *a, u = cell
    dims, d_s = pi.shape[:-1], pi.shape[-1]
    pi_qi = pi.sum(axis=-1)
    c = pi[tuple(a)] / pi_qi[tuple(a)]
    has_u = _sample(rng, np.tile(c, (draws, 1))) == u
    groups = np.array(list(itertools.product(*[range(d) for d in dims])))
    like = np.tile(pi_qi.ravel(), (draws, 1))
    for k, (d, ps) in enumerate(zip(dims, qi_ps)):
        for p in ps:
            P = keep_matrix(d, p)
            seen = _sample(rng, np.tile(P[:, a[k]], (draws, 1)))  # her QI k as release j publishes it
            like = like * P[seen][:, groups[:, k]]
    qi_right = (groups[_sample(rng, like)] == a).all(axis=1)
    like_s = np.tile(c, (draws, 1))
    for p in s_ps:
        P = keep_matrix(d_s, p)
        like_s = like_s * P[_sample(rng, np.tile(P[:, u], (draws, 1)))]
    return float(np.mean(has_u & qi_right & (_sample(rng, like_s) == u)))


def test_the_joint_randomized_response_risk_is_result_1_on_the_stacked_keep_matrices():
    """Result 1 over two releases against 10^5 simulated draws of its event per cell; with one release, Eq. (6)
    bit for bit; a release publishing an attribute as it is makes it known."""
    from verifier.attacks.composition import joint_rr_risk, stacked_keep_matrix
    from verifier.attacks.disclosure import rr_risk

    rng = np.random.default_rng(40)
    pi = rng.integers(1, 30, size=(2, 3, 3)).astype(float)
    pi[1, 2, 0] = 0.0  # an empty cell: no record, risk 0
    pi /= pi.sum()
    qi_ps, s_ps = [[0.8, 0.7], [1.0, 0.6]], [0.7, 0.55]
    joint = joint_rr_risk(pi, qi_ps, s_ps)
    assert joint[1, 2, 0] == 0.0
    first = rr_risk(pi, [ps[0] for ps in qi_ps], s_ps[0])
    for cell in [(0, 0, 0), (0, 1, 2), (1, 0, 1), (1, 2, 2)]:
        seen = _simulated_joint_rr(rng, pi, qi_ps, s_ps, cell, 100_000)
        error = np.sqrt(joint[cell] * (1 - joint[cell]) / 100_000)
        assert abs(seen - joint[cell]) <= 4.5 * error, cell
        assert abs(seen - first[cell]) > 5 * error, cell  # the first release's own risk misses the joint event
    for j in range(2):  # one release: exactly its own risk
        alone = rr_risk(pi, [ps[j] for ps in qi_ps], s_ps[j])
        assert np.array_equal(joint_rr_risk(pi, [[ps[j]] for ps in qi_ps], [s_ps[j]]), alone)
        assert np.sum(pi * joint) > np.sum(pi * alone)  # two copies tell more on average than one
    assert np.array_equal(stacked_keep_matrix(3, [0.7, 1.0]), np.eye(3))
    stack = stacked_keep_matrix(3, [0.7, 0.6])
    assert stack.shape == (9, 3) and np.allclose(stack.sum(axis=0), 1.0)
    assert stack[1 * 3 + 2, 0] == pytest.approx(0.15 * 0.2)  # 0 published as 1, then as 2


def _clinic(tmp_path) -> None:
    rows = clinic(tmp_path, 200)
    (tmp_path / "me.json").write_text(json.dumps(dict(zip(["age", "sex", "race", "disease"], rows[1].split(",")))))
    assert publisher(["keygen", "--out", str(tmp_path / "keys"), "--unencrypted"]) == 0


def _method_release(tmp_path, name: str, method: list[str], seed: int) -> str:
    assert publisher(["release", "--input", str(tmp_path / "x.csv"), "--schema", str(tmp_path / "schema.json"),
                      *method, "--allow-degenerate", "--samples", "200", "--seed", str(seed), "--key",
                      str(tmp_path / "keys" / "private.pem"), "--dataset-id", "clinic", "--release-version",
                      str(seed), "--out", str(tmp_path / name)]) == 0
    return str(tmp_path / name)


@pytest.mark.parametrize("method", ["randomized_response", "random_attribute_replacement"])
def test_her_joint_risk_in_two_releases_of_a_randomizing_method(tmp_path, capsys, method):
    """Two releases by randomized response (Result 1 on the stacked keep matrices) or by random replacement
    (paper 004's posteriors, multiplied): each release's own risk is her single check's, and the two together
    tell more than either. A mix of randomized response and another method is left out, and says why."""
    _clinic(tmp_path)
    argv = {"randomized_response": ["--method", "randomized_response", "--param", "l=3", "--param", "scope=both"],
            "random_attribute_replacement": ["--method", "random_attribute_replacement"]}[method]
    releases = [_method_release(tmp_path, name, argv, seed) for name, seed in (("one", 1), ("two", 2))]
    key, me = str(tmp_path / "keys" / "public.pem"), str(tmp_path / "me.json")
    alone, paper = [], []
    for release in releases:
        capsys.readouterr()
        assert verifier(["check", release, "--key", key, "--record", me, "--json"]) == 0
        entry = json.loads(capsys.readouterr().out)["attribute_disclosure"]["disease"]
        alone.append(entry["risk"])
        paper.append(entry.get("paper_risk", entry["risk"]))
    assert verifier(["joint", *releases, "--key", key, "--record", me, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    entry = out["attribute_disclosure"]["disease"]
    assert entry["each"] == pytest.approx(alone, abs=1e-12) and out["left_out"] == {}
    assert entry.get("paper_risk", entry["risk"]) > max(paper), (entry, paper)
    if method == "randomized_response":
        assert entry["mode"] == "randomized_response" and entry["conditioned_on"] == ["sex", "race"]
        # the disease is published as it is (keep 1) and age is not randomized: the intruder who knows everyone's
        # age finds her row and reads her disease, whatever the paper's risk on the randomized cells (issue 58)
        assert entry["value_bound"] == 1.0 and entry["risk"] == 1.0 and entry["prior"] == pytest.approx(
            json.loads(Path(releases[0], "manifest.json").read_text())["predicate"]["claims"]["attribute_disclosure"][
                "disease"]["marginal"][json.loads(Path(me).read_text())["disease"]] / 200)
    else:
        assert entry["mode"] == "joint" and sum(entry["left"].values()) == pytest.approx(1.0)
        mixed = _method_release(tmp_path, "rr", ["--method", "randomized_response", "--param", "l=3"], 3)
        capsys.readouterr()
        assert verifier(["joint", releases[0], mixed, "--key", key, "--record", me, "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert "disease" not in out["attribute_disclosure"]
        assert out["left_out"] == {"disease": "it is published by randomized response in some of these releases "
                                              "only, and no joint model of the mix is derived"}
