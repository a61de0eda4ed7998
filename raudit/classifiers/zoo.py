"""The registered classifiers (imported on first use; see :mod:`raudit.classifiers`).

The 12 of the utility benchmark follow EVALUATION.md section 1 / the study's appendix
B.2 exactly: scikit-learn defaults except LogisticRegression(max_iter=2000),
LinearSVC(max_iter=10000) scored by decision_function, MLPClassifier(max_iter=1000),
and XGBoost as XGBRegressor() whose prediction is the score (as the paper lists it).
"""

from __future__ import annotations

from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.ensemble import (AdaBoostClassifier, BaggingClassifier, GradientBoostingClassifier,
                              RandomForestClassifier)
from sklearn.linear_model import LogisticRegression as _LR
from sklearn.naive_bayes import BernoulliNB as _BNB
from sklearn.naive_bayes import GaussianNB as _GNB
from sklearn.neural_network import MLPClassifier
from sklearn.svm import LinearSVC
from sklearn.tree import DecisionTreeClassifier

from raudit.classifiers.base import Classifier


def _xgb(seed: int):
    from xgboost import XGBRegressor

    return XGBRegressor(random_state=seed, n_jobs=1)


LogisticRegression = Classifier("lr", "Logistic Regression",
                                lambda s: _LR(max_iter=2000, random_state=s))
RandomForest = Classifier("rf", "Random Forest",
                          lambda s: RandomForestClassifier(random_state=s, n_jobs=1))
GaussianNB = Classifier("gnb", "Gaussian Naive Bayes", lambda s: _GNB())  # no randomness
BernoulliNB = Classifier("bnb", "Bernoulli Naive Bayes", lambda s: _BNB())  # no randomness
LinearSVM = Classifier("linear-svm", "Linear SVM",
                       lambda s: LinearSVC(max_iter=10000, random_state=s), score="decision")
DecisionTree = Classifier("dt", "Decision Tree", lambda s: DecisionTreeClassifier(random_state=s))
LDA = Classifier("lda", "LDA", lambda s: LinearDiscriminantAnalysis())  # no randomness
AdaBoost = Classifier("adaboost", "AdaBoost", lambda s: AdaBoostClassifier(random_state=s))
Bagging = Classifier("bagging", "Bagging",
                     lambda s: BaggingClassifier(random_state=s, n_jobs=1))
GBM = Classifier("gbm", "GBM", lambda s: GradientBoostingClassifier(random_state=s))
MLP = Classifier("mlp", "MLP", lambda s: MLPClassifier(max_iter=1000, random_state=s))
XGBoost = Classifier("xgboost", "XGBoost", _xgb, score="predict")

# The membership-inference attack's classifier (raudit.attacks.classifier): the
# study's RandomForestClassifier with defaults, seeded, one job.
AttackForest = Classifier("attack-rf", "Random Forest (attack)",
                          lambda s: RandomForestClassifier(random_state=s, n_jobs=1))
