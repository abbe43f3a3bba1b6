"""How the hare routes spend their time limit: every stage budget in one place.

A route receives the method's :class:`~dlsched.solvers.deadline.Deadline` and splits it with the
shares below (``deadline.share_from_start(s)``: the first s of the whole limit;
``deadline.share_of_rest(s)``: s of what is left; ``deadline.share_of_limit(s, cap)``: s of the
whole limit from now, at most cap seconds;
``deadline.sooner(seconds)``: ending that much sooner), never with clock arithmetic of its
own. Order of a general exact run: the hint's baselines (HINT_SHARE), then on small instances
the branch and bound (BRANCH_SHARE_*, after a warm start above BRANCH_SMALL_TASKS tasks), then
job-subset bounds (SUBSET_SHARE), the neighbourhood search (LNS_SHARE) and the CP-SAT stage
(the rest, LP_SHARE of it for the time-indexed LP bound), all ending CHECK_GRACES before the
deadline.
"""

# --- The hint (:mod:`methods`) ---

#: Share of the time limit the exact routes give the hint's baselines: they stop HINT_SHARE of
#: the limit after the method's start (the list schedules always run; a baseline cut by it is
#: left out). The pipeline (:mod:`pipeline`) splits what is left among its stages.
HINT_SHARE = 0.1

# --- The exact route's pipeline (:mod:`pipeline`) ---

#: Shares of the time left after the branch and bound stage (the stages of
#: :data:`pipeline.STAGES` from the subset stage on split it) of the subset stage (at most: it
#: ends SUBSET_SHARE of it after its start) and of the large-neighbourhood search (:mod:`lns`)
#: that follows it on the same instances (LNS_SHARE of it from the search's start, never past
#: the deadline); the final CP-SAT stage gets what is left. On the congested span-40 instance of
#: benchmarks/READING_hare.md (section 2, third table) the search gave a better schedule than
#: the final CP-SAT stage in the same time, and that stage had not moved the bound there.
SUBSET_SHARE, LNS_SHARE = 0.3, 0.45
#: The branch and bound's share of the time left when it starts, by size: at most 20 tasks it
#: proved every instance of benchmarks/RESULTS_hare.md section 7, and starts at once from the
#: best list schedule (a CP-SAT warm start first made the 53 instances take 90 s in all instead
#: of 19 s, one session); above, a warm start comes first and CP-SAT keeps half of the time.
BRANCH_SHARE_SMALL, BRANCH_SHARE_LARGE, BRANCH_SMALL_TASKS = 0.8, 0.5, 20
#: The short CP-SAT run before the branch and bound above 20 tasks
#: (:func:`pipeline.warm_start`), at most WARM_SECONDS or WARM_SHARE of the time left when the
#: stage starts (it counts in the branch and bound's share): two workers found the optimum 99.9
#: of hetero-4gpu-6jobs in 1.5 s where one stopped at 100.4.
WARM_SECONDS, WARM_SHARE, WARM_WORKERS = 1.5, 0.1, 2

# --- The CP-SAT stage (:mod:`cpsat`) ---

#: The time-indexed LP bound's budget: this share of the time the CP-SAT stage has left, at most
#: LP_SECONDS; below LP_MIN_BUDGET seconds it is not attempted (see :func:`cpsat.lp_bound_stage`).
LP_SHARE, LP_SECONDS, LP_MIN_BUDGET = 0.2, 30.0, 1.0
#: A CP-SAT model (the final stage's, a search step's) is built in at most this share of the
#: time its stage has left, or not at all (the stage keeps its hint): hinting it, CP-SAT's own
#: loading and reading its schedule back take about as long again (1,000 jobs, 4,055 tasks:
#: 0.24 s to build, 0.15 s to hint and load), and the solver needs some of it.
BUILD_SHARE = 0.5

# --- Room kept for the work after a route (:mod:`methods`) ---

#: In graces of the method's limit (:meth:`Deadline.grace`: a tenth of it, at most 1 s). The
#: exact pipeline ends CHECK_GRACES before the method's deadline: its schedule is then checked
#: from the raw instance (on 1,000 jobs at 1 s its last CP-SAT model was still being built at
#: the limit). A Pyomo model forked under the deadline (RL, its strengthening, the disjunctive
#: model: built in Python, so killed when late) gets :meth:`Deadline.for_fork`, killed a grace
#: before the limit, which leaves the parent that grace for its fallback (the combinatorial
#: bound, Algorithm 1 on each job's chain starts, the greedy schedule) and the check: 0.05-0.1 s
#: on 1,000 jobs, which ran past the limit and its grace.
CHECK_GRACES = 0.5

# --- The online HLAS methods (:mod:`online.methods`) ---

#: GPU_Grouping's MILP ends GROUPING_SHARE of the limit after the method's start: the
#: simulation that follows cannot stop (0.12 s on 1,000 jobs; the grouping alone took 0.9 s).
GROUPING_SHARE = 0.5

# --- The R || sum w_j C_j route (:mod:`special`) ---

#: The stages' budgets, as shares of the route's time limit (its Deadline): the first local
#: search gets LS_SHARE (at most LS_SECONDS) from the start, and the polish after the restricted
#: master as much again; column generation ends LS_SHARE + CG_SHARE after the start; the
#: restricted master with integer columns gets MASTER_SHARE (at most MASTER_SECONDS) from its
#: start; the reduced-cost enumeration and its MIP (:func:`colgen.enumerated_master`) end
#: ENUM_END after the start; the exact model of stage 3 gets the rest, or (too large for one)
#: the second local search runs until LS_END after the start, leaving time to check the
#: schedule. Without a limit: LS_SECONDS and MASTER_SECONDS, the rest unbounded.
LS_SHARE, LS_SECONDS, CG_SHARE, MASTER_SHARE, MASTER_SECONDS = 0.05, 5.0, 0.6, 0.15, 60.0
ENUM_END, LS_END = 0.85, 0.98
