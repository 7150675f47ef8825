"""Feature extractors: what the cost model sees of a scheduled program."""

from tir_mlir.meta_schedule.feature_extractor.per_store_feature import PerStoreFeature

__all__ = ["PerStoreFeature"]
