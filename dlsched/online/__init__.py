"""What the online families share, below them: it imports no family, and each family turns
what it gives into its own instances and bounds.

- :mod:`.traces`: the readers of Gavel's Philly-derived traces and the Alibaba PAI 2020
  tables, returning family-neutral rows (:class:`~.traces.GavelJob` with its
  :class:`~.traces.Speeds`, :class:`~.traces.PaiJob`);
- :mod:`.rows`: a trace file's lines, each checked, and its bad rows (:class:`~.rows.BadRows`:
  refused, or skipped and counted with ``skip_bad_rows=true``);
- :mod:`.params`: the generator's trace parameters and an instance file's ``trace`` object
  (:class:`~.params.GavelReader`: a family's ``load_trace`` and ``read_manifest``);
- :mod:`.bounds`: the pooled single-machine relaxations of the flow time (SRPT, Goemans'
  WSPT bound, the mixed bound), the search of resource weights (:func:`~.bounds.relaxations`),
  what a result reports beside its schedule (:func:`~.bounds.flow_details`) and the bound
  computed once per instance (:func:`~.bounds.cached`).
"""
