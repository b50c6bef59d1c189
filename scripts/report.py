"""Rule `report`: one HTML page over all tables and figures with provenance links."""

from judgeaudit.logs import setup
from judgeaudit.provenance import record_snakemake_job
from judgeaudit.render.report import build_report

log = setup(snakemake.log[0])  # noqa: F821
build_report(list(snakemake.input.tables), list(snakemake.input.figures),  # noqa: F821
             snakemake.output.html)  # noqa: F821
log.info("wrote %s", snakemake.output.html)  # noqa: F821
record_snakemake_job(snakemake)  # noqa: F821
