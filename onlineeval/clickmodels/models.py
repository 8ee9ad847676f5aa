"""The click models by name (``MODELS``), as the API and the CLI look them up."""

from __future__ import annotations

from typing import Any

from onlineeval.clickmodels.cascade_models import CM, DBN, DCM, SDBN
from onlineeval.clickmodels.position_models import PBM, UBM, RankCTR
from onlineeval.registry import Registry

#: the model objects (stateless: parameters live in a ClickModelFit)
MODELS: Registry[Any] = Registry("click model")
MODELS.register("ctr", RankCTR(), aliases=("rctr", "rank-ctr"))
MODELS.register("pbm", PBM())
MODELS.register("cascade", CM(), aliases=("cm",))
MODELS.register("dcm", DCM())
MODELS.register("ubm", UBM())
MODELS.register("sdbn", SDBN())
MODELS.register("dbn", DBN())

#: the order the CLI lists and compares them in (simplest first, as in the book)
ORDER = ("ctr", "pbm", "cascade", "dcm", "ubm", "sdbn", "dbn")
