"""The real MNIST 7s and 9s shipped with the package (harness/targets/data) and their reduction
to 50 principal components for 002's Table 1 (glm_data.mnist_7_vs_9)."""

from __future__ import annotations

import hashlib
from importlib import resources

import numpy as np
import pytest

from harness.targets import glm_data


def test_the_shipped_file_is_found_as_package_data_with_its_readme_and_checksum() -> None:
    folder = resources.files("harness.targets").joinpath("data")
    blob = folder.joinpath(glm_data.MNIST_FILE).read_bytes()
    assert hashlib.sha256(blob).hexdigest() == glm_data.MNIST_SHA256
    readme = folder.joinpath("README.md").read_text(encoding="utf-8")
    assert glm_data.MNIST_SHA256 in readme and "CC BY-SA 3.0" in readme
    assert "Yann LeCun" in readme and "Corinna Cortes" in readme


def test_both_splits_load_with_their_shapes_and_labels() -> None:
    images, labels = glm_data.load_mnist_7_9("train")
    assert images.shape == (12_214, 784) and images.dtype == np.uint8
    assert labels.shape == (12_214,) and set(np.unique(labels)) == {7, 9}
    assert (int(np.sum(labels == 7)), int(np.sum(labels == 9))) == (6265, 5949)
    test_images, test_labels = glm_data.load_mnist_7_9("test")
    assert test_images.shape == (2037, 784) and test_labels.shape == (2037,)


def test_a_file_that_does_not_match_its_checksum_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"mnist_7_9\.npz has SHA-256 006384d5.*expected 0{64}"):
        glm_data.load_mnist_7_9(sha256="0" * 64)
    with pytest.raises(ValueError, match="'split'"):
        glm_data.load_mnist_7_9("validation")


def test_pca_keeps_50_centred_components_of_decreasing_variance_deterministically() -> None:
    images, _ = glm_data.load_mnist_7_9()
    pixels = images / 255.0
    scores, variances = glm_data.pca_components(pixels, 50)
    assert scores.shape == (12_214, 50) and variances.shape == (50,)
    assert np.all(np.diff(variances) <= 0.0) and variances[-1] > 0.0
    assert np.allclose(scores.mean(axis=0), 0.0, atol=1e-10)
    assert np.allclose(scores.var(axis=0), variances, rtol=1e-8)
    # uncorrelated components; the kept variance is most of the pixels' total
    cov = scores.T @ scores / scores.shape[0]
    assert np.allclose(cov, np.diag(variances), atol=1e-8)
    assert 0.7 < variances.sum() / pixels.var(axis=0).sum() < 0.9
    again, _ = glm_data.pca_components(pixels, 50)
    assert np.array_equal(scores, again)
    with pytest.raises(ValueError, match="'k'"):
        glm_data.pca_components(pixels, 785)


def test_the_logistic_data_set_is_the_real_digits_with_an_intercept() -> None:
    data = glm_data.mnist_7_vs_9()
    images, labels = glm_data.load_mnist_7_9()
    assert (data.model, data.N, data.P) == ("logistic", glm_data.LOGISTIC_N, 51)
    assert data.source.startswith("real: MNIST 7 vs 9") and data.theta_true is None
    assert np.all(data.X[:, 0] == 1.0)
    assert np.array_equal(data.t, (labels == 9).astype(np.float64))
    assert np.array_equal(data.X[:, 1:], glm_data.pca_components(images / 255.0, 50)[0])
