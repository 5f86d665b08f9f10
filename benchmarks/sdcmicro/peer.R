# One step of sdcMicro 5.8.1 on one CSV, the peer of one row of `python -m benchmarks.sdcmicro_peer`.
#
#   Rscript benchmarks/sdcmicro/peer.R STEP CSV OUT.json [keys=a,b] [sens=s] [num=a,b] [k=5] [aggr=5] [pram=v] [pd=0.8]
#                                        [write=OUTPUT.csv]
#
# STEP: measure_risk (createSdcObj and its frequencies and individual risks), local_suppression
# (localSuppression(k)), mdav (microaggregation(method = "mdav", aggr) of the numeric columns, the data.frame
# method: the algorithm alone) or pram (pram of one key variable, keeping each value with probability pd).
# OUT.json gets the step's seconds (system.time, elapsed) and the figures both tools compute: the records
# violating k-anonymity (a suppressed cell matching any value), the equivalence classes, the output's groups.
# The process is timed whole by the benchmark, R's start and the CSV's reading included.

suppressPackageStartupMessages({
  library(sdcMicro)
  library(data.table)
  library(jsonlite)
})

args <- commandArgs(trailingOnly = TRUE)
step <- args[1]
csv <- args[2]
out_json <- args[3]
opt <- list(keys = "age,education,marital-status,race,sex", sens = "occupation",
            num = "age,fnlwgt,education-num,capital-gain,capital-loss,hours-per-week", k = "5", aggr = "5",
            pram = "education", pd = "0.8")
for (a in args[-(1:3)]) {
  kv <- strsplit(a, "=", fixed = TRUE)[[1]]
  opt[[kv[1]]] <- paste(kv[-1], collapse = "=")
}
plain <- function(x) gsub("-", "_", x, fixed = TRUE)  # localSuppression evaluates the names: no hyphens
keys <- plain(strsplit(opt$keys, ",")[[1]])
num <- plain(strsplit(opt$num, ",")[[1]])
opt$sens <- plain(opt$sens)
opt$pram <- plain(opt$pram)
k <- as.integer(opt$k)
dat <- as.data.frame(fread(csv, colClasses = "character"))
names(dat) <- plain(names(dat))
out <- list(step = step, n = nrow(dat), sdcMicro = as.character(packageVersion("sdcMicro")))
classes <- function(d) length(unique(do.call(paste, c(d[keys], sep = "\r"))))

if (step == "mdav") {
  nd <- dat[, num, drop = FALSE]
  for (v in num) nd[[v]] <- as.numeric(nd[[v]])
  t <- system.time(m <- microaggregation(nd, variables = num, method = "mdav", aggr = as.integer(opt$aggr)))
  out$groups <- nrow(unique(m$mx))
} else {
  for (v in c(keys, opt$sens)) dat[[v]] <- factor(dat[[v]])
  if (step == "measure_risk") {
    t <- system.time({
      sdc <- createSdcObj(dat, keyVars = keys, sensibleVar = opt$sens)
      sdc <- measure_risk(sdc)
    })
    out$violating <- sum(sdc@risk$individual[, "fk"] < k)
    out$classes <- classes(dat)
    out$expected_reidentifications <- sdc@risk$global$risk_ER
  } else if (step == "local_suppression") {
    sdc <- createSdcObj(dat, keyVars = keys, sensibleVar = opt$sens)
    t <- system.time(sdc <- localSuppression(sdc, k = k))
    out$violating <- sum(sdc@risk$individual[, "fk"] < k)
    out$smallest_fk <- min(sdc@risk$individual[, "fk"])
    out$suppressed_cells <- sum(is.na(sdc@manipKeyVars[keys]))
    if (!is.null(opt$write)) {  # the output, rows in the input's order, NA where suppressed
      written <- dat
      written[keys] <- lapply(sdc@manipKeyVars[keys], as.character)
      fwrite(written, opt$write, na = "NA")
    }
  } else if (step == "pram") {
    sdc <- createSdcObj(dat, keyVars = keys, sensibleVar = opt$sens, pramVars = opt$pram)
    set.seed(1)
    t <- system.time(sdc <- pram(sdc, variables = opt$pram, pd = as.numeric(opt$pd)))
    out$changed <- mean(as.character(sdc@manipPramVars[[opt$pram]]) != as.character(dat[[opt$pram]]))
  } else stop("unknown step ", step)
}
out$seconds <- unname(t["elapsed"])
write_json(out, out_json, auto_unbox = TRUE, digits = NA)
