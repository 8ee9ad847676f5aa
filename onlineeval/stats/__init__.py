"""Statistics for A/B analysis, computed from per-unit sums.

Everything here works on the per-randomization-unit rows the SQL layer emits (or on their
sums), and every distribution comes from :mod:`scipy.stats`:

- :mod:`~onlineeval.stats.moments` — means and covariances of per-unit vectors, ratio metrics
  with their delta-method variance;
- :mod:`~onlineeval.stats.tests` — two-arm comparisons: delta-method t and Welch's t (both
  with Welch–Satterthwaite df), Mann–Whitney U, unit-resampling bootstrap;
- :mod:`~onlineeval.stats.cuped` — CUPED variance reduction with a pre-period covariate;
- :mod:`~onlineeval.stats.srm` — sample ratio mismatch;
- :mod:`~onlineeval.stats.multiple` — Holm and Benjamini–Hochberg adjustment;
- :mod:`~onlineeval.stats.power` — minimum detectable effect and units needed (t test);
- :mod:`~onlineeval.stats.sequential` — confidence sequences and the sequential SRM check;
- :mod:`~onlineeval.stats.results` — :class:`~onlineeval.stats.results.ComparisonResult`, the
  one shape of a comparison's result (estimate, interval, p-values, test, sample sizes) that
  the A/B, interleaving, offline and agreement readouts share.
"""

from onlineeval.namespace import lazy_submodules

__getattr__ = lazy_submodules(__name__)  # onlineeval.namespace
