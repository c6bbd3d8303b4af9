"""Meta policies and the meta-scheduler's link model, on small hand-checked scenarios."""

from __future__ import annotations

from .conftest import job, machine, run_scenario


def cluster(name: str, cpus: int = 1, latency: float = 1.0, **extra) -> dict:
    return {"name": name, "latency": latency, "machines": [machine(cpus)], **extra}


def test_round_robin_cycles_over_clusters(tmp_path):
    jobs = [job(i, i, 1, 1) for i in range(1, 7)]
    rows = run_scenario(tmp_path, [cluster("a"), cluster("b"), cluster("c")], jobs, meta="round-robin")
    assert [rows[i]["cluster"] for i in range(1, 7)] == ["a", "b", "c", "a", "b", "c"]


def test_round_robin_skips_clusters_that_cannot_run_the_job(tmp_path):
    jobs = [job(1, 0, 2, 1), job(2, 1, 2, 1), job(3, 2, 1, 1)]
    rows = run_scenario(
        tmp_path, [cluster("a", cpus=2), cluster("b"), cluster("c", cpus=2)], jobs, meta="round-robin"
    )
    assert [rows[i]["cluster"] for i in (1, 2, 3)] == ["a", "c", "a"]


def test_least_load_sees_queues_only_through_messages_and_its_own_dispatches(tmp_path):
    # Every job runs 100 s on 1-CPU clusters with 1 s latency.
    # t=0: J1 -> a (tie, lowest index); J2 -> b (a has J1 in flight).
    # t=5: both report 0 queued (J1, J2 running): J3 -> a.
    # t=5.5: J3 arrives at a only at 6, so a counts 1 (in flight): J4 -> b.
    # t=20: a reported 1 queued (J3), b 1 (J4): tie -> a.
    jobs = [job(1, 0, 1, 100), job(2, 0, 1, 100), job(3, 5, 1, 100), job(4, 5.5, 1, 100), job(5, 20, 1, 100)]
    rows = run_scenario(tmp_path, [cluster("a"), cluster("b")], jobs, meta="least-load")
    assert [rows[i]["cluster"] for i in range(1, 6)] == ["a", "b", "a", "b", "a"]
    assert [rows[i]["arrive"] for i in range(1, 6)] == [1, 1, 6, 6.5, 21]


def test_dispatches_on_one_link_are_serialized(tmp_path):
    # 2 MB at 1 MB/s takes 2 s; the second transfer waits for the first; latency 0.5 s.
    jobs = [job(1, 0, 1, 1, in_bytes=2e6), job(2, 0, 1, 1, in_bytes=2e6), job(3, 10, 1, 1, in_bytes=1e6)]
    rows = run_scenario(tmp_path, [cluster("a", cpus=4, latency=0.5, bandwidth=1e6)], jobs)
    assert [rows[i]["arrive"] for i in (1, 2, 3)] == [2.5, 4.5, 11.5]


def test_own_site_sends_each_job_to_its_site_and_rejects_unknown_sites(tmp_path):
    jobs = [job(1, 0, 1, 1, site="b"), job(2, 0, 1, 1, site="a"), job(3, 0, 1, 1, site="zz")]
    rows = run_scenario(tmp_path, [cluster("a"), cluster("b")], jobs, meta="own-site", direct=False)
    assert [rows[i]["cluster"] for i in (1, 2)] == ["b", "a"]
    assert [rows[i]["arrive"] for i in (1, 2)] == [1, 1]  # through the meta link
    assert rows[3]["status"] == "rejected" and "site 'zz'" in rows[3]["reason"]


def test_jobs_naming_a_cluster_enter_it_directly(tmp_path):
    jobs = [job(1, 3, 1, 1, site="b")]
    rows = run_scenario(tmp_path, [cluster("a"), cluster("b")], jobs)
    assert (rows[1]["cluster"], rows[1]["arrive"], rows[1]["start"]) == ("b", 3, 3)


def test_meta_rejects_a_job_no_cluster_can_run(tmp_path):
    rows = run_scenario(tmp_path, [cluster("a", cpus=2), cluster("b", cpus=2)], [job(1, 0, 3, 1)])
    assert rows[1]["status"] == "rejected" and rows[1]["cluster"] is None
    assert rows[1]["reason"].startswith("no cluster can run job 1")


def test_random_is_seeded(tmp_path):
    jobs = [job(i, i, 1, 1) for i in range(1, 41)]
    clusters = [cluster("a"), cluster("b"), cluster("c")]
    picks = []
    for n, seed in enumerate((1, 1, 2)):
        (tmp_path / str(n)).mkdir()
        rows = run_scenario(tmp_path / str(n), clusters, jobs, meta="random", seed=seed)
        picks.append([rows[i]["cluster"] for i in range(1, 41)])
    assert picks[0] == picks[1] != picks[2]
    assert set(picks[0]) == {"a", "b", "c"}
