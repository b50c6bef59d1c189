# Container image for Kubernetes jobs (profiles/kubernetes): the project installed as
# the Makefile installs it, with torch's CPU build. Build and push where the cluster
# pulls from:
#   docker build -t REGISTRY/judgeaudit:0.1.0 . && docker push REGISTRY/judgeaudit:0.1.0
# Snakemake deploys the workflow sources (Snakefile, rules/, scripts/, ...) into each
# job itself; the image only has to import the package and its pinned dependencies.
FROM python:3.11-slim

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    MPLBACKEND=Agg

WORKDIR /opt/judgeaudit
COPY pyproject.toml README.md ./
COPY src ./src

# torch first, the CPU build (a plain `pip install torch` pulls the CUDA wheels);
# then the project with the provider SDKs and the storage plugin the jobs use; then
# resemblyzer without its stale metadata deps (its real deps are pinned above).
RUN pip install --upgrade pip \
 && pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu \
 && pip install '.[kubernetes]' \
 && pip install --no-deps resemblyzer==0.1.4 \
 && python -c "import judgeaudit, snakemake, torch; print(torch.__version__)" \
 && python -m judgeaudit.librosa_safe

WORKDIR /workdir
