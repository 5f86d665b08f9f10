# sdcMicro's outputs the tests read (issue 61, item 3), made from the Adult sample the repository ships.
#
#   Rscript tests/data/sdcmicro/make.R     (from the repository's root; R and sdcMicro 5.8.1:
#                                           sh ../shared/tools/sdcmicro/install.sh)
#
# Input: the first 600 records of experiments/data/adult_sample_3000.csv, quasi-identifiers age (in ten-year
# bands, as a protector codes it before local suppression), sex, race and marital-status, sensitive
# salary-class. Outputs, each in the input's row order, NA for a suppressed cell, with sdcMicro's own figures:
#
# - local_suppression_k3.csv: localSuppression(k = 3), default importance;
# - local_suppression_k3.json: sdcMicro's figures after it: each record's f_k (a suppressed cell matching any
#   value), the records violating 3-anonymity, the suppressed cells per key.
#
# The script is deterministic: localSuppression draws nothing, and noise and pram draw after set.seed(61).

suppressPackageStartupMessages({
  library(sdcMicro)
  library(jsonlite)
})

here <- "tests/data/sdcmicro"
raw <- read.csv("experiments/data/adult_sample_3000.csv", check.names = FALSE, stringsAsFactors = FALSE,
                colClasses = "character")[1:600, ]
dat <- data.frame(age = sprintf("%d-%d", as.integer(raw$age) %/% 10 * 10, as.integer(raw$age) %/% 10 * 10 + 9),
                  sex = raw$sex, race = raw$race, marital_status = raw[["marital-status"]],
                  salary_class = raw[["salary-class"]], stringsAsFactors = TRUE)
keys <- c("age", "sex", "race", "marital_status")
write.csv(dat, file.path(here, "input.csv"), row.names = FALSE, quote = FALSE)

sdc <- createSdcObj(dat, keyVars = keys, sensibleVar = "salary_class")
before <- sdc@risk$individual[, "fk"]
sdc <- localSuppression(sdc, k = 3)
out <- dat
out[keys] <- lapply(sdc@manipKeyVars[keys], as.character)
write.csv(out, file.path(here, "local_suppression_k3.csv"), row.names = FALSE, quote = FALSE, na = "NA")
fk <- sdc@risk$individual[, "fk"]
supps <- as.data.frame(sdc@localSuppression$supps)
write_json(list(
  sdcMicro = as.character(packageVersion("sdcMicro")), R = R.version.string,
  call = "localSuppression(createSdcObj(input, keyVars = c('age', 'sex', 'race', 'marital_status'), sensibleVar = 'salary_class'), k = 3)",
  n = nrow(out), fk = as.integer(fk), fk_before = as.integer(before),
  violating_3_before = sum(before < 3), violating_3 = sum(fk < 3),
  suppressed_cells = as.list(supps[nrow(supps), ]),
  records_with_suppression = sum(rowSums(is.na(sdc@manipKeyVars[keys])) > 0)
), file.path(here, "local_suppression_k3.json"), auto_unbox = TRUE, pretty = TRUE)
cat("wrote", here, "\n")

# Microaggregation and noise of numbers: the first 600 records' age, education-num and hours-per-week
# (quasi-identifiers) and salary-class (sensitive).
num <- data.frame(age = as.numeric(raw$age), education_num = as.numeric(raw[["education-num"]]),
                  hours_per_week = as.numeric(raw[["hours-per-week"]]), salary_class = raw[["salary-class"]])
write.csv(num, file.path(here, "numbers.csv"), row.names = FALSE, quote = FALSE)
vars <- c("age", "education_num", "hours_per_week")
mdav <- num
mdav[vars] <- microaggregation(num[vars], variables = vars, method = "mdav", aggr = 3)$mx
write.csv(mdav, file.path(here, "mdav_3.csv"), row.names = FALSE, quote = FALSE)
set.seed(61)
noised <- num
noised[vars] <- round(addNoise(num[vars], variables = vars, noise = 50, method = "additive")$xm, 2)
write.csv(noised, file.path(here, "noise_50.csv"), row.names = FALSE, quote = FALSE)
cat("wrote the numbers\n")

# PRAM (issue 61, item 3): marital_status (a quasi-identifier) and salary_class (sensitive) of input.csv
# post-randomized with pd = 0.8 (sdcMicro's default alpha = 0.5), set.seed(61). Each column's transition matrix
# Rs, as get.sdcMicroObj(obj, "pram") holds it (a row per true category, summing to 1), is written by
# write.csv with 17 significant digits; sdcMicro's own summary goes to pram.json.
set.seed(61)
sdc <- createSdcObj(dat, keyVars = c("age", "sex", "race"), pramVars = c("marital_status", "salary_class"))
sdc <- pram(sdc, pd = 0.8)
pramed <- dat
for (v in c("marital_status", "salary_class")) pramed[[v]] <- as.character(sdc@manipPramVars[[v]])
write.csv(pramed, file.path(here, "pram.csv"), row.names = FALSE, quote = FALSE)
held <- get.sdcMicroObj(sdc, "pram")
for (v in c("marital_status", "salary_class")) {
  Rs <- held$params[[v]]$Rs
  write.csv(format(as.data.frame(Rs), digits = 17), file.path(here, paste0("pram_", v, ".csv")))
}
write_json(list(
  sdcMicro = as.character(packageVersion("sdcMicro")), R = R.version.string,
  call = "pram(createSdcObj(input, keyVars = c('age', 'sex', 'race'), pramVars = c('marital_status', 'salary_class')), pd = 0.8) after set.seed(61)",
  n = nrow(pramed), summary = held$summary
), file.path(here, "pram.json"), auto_unbox = TRUE, pretty = TRUE)
cat("wrote pram\n")
