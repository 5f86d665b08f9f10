"use strict";
// The page's form: the release folder, the publisher's key, her record; every value stays in this window.

(function () {
  const pp = globalThis.permutedPrivacy;
  // her check in one release, or with other releases of her, together
  const checkOf = (message) => (message.releases ? pp.checkJointly : pp.checkRecord);
  if (typeof document === "undefined") {
    // in the page's worker: run her check off the page's thread, and say how far the random-match test is
    globalThis.onmessage = async ({ data }) => {
      const progress = (done, total) => postMessage({ progress: [done, total] });
      postMessage({ result: await checkOf(data)({ ...data, options: { ...(data.options || {}), progress } }) });
    };
    return;
  }
  const $ = (id) => document.getElementById(id);
  const state = { files: null, name: "the release", pem: "", statement: null, policy: null, policyName: null, proof: null,
    proofName: null, logPolicy: null, logPolicyName: null, others: [] };
  const RECORD_BYTES = 1 << 20;  // the command line's limit on a record file (bounded_files.LIMITS["record"])

  function say(id, text) {
    $(id).textContent = text;
  }

  async function readFiles(list) {
    // Sizes first: a file over its limit is refused before it is read (a 108 MB manifest would take the tab down).
    for (const f of list) {
      const big = pp.size_problem(f.name, f.size);
      if (big) throw new pp.ReleaseError(big[0], f.name, big[1]);
    }
    const files = pp.table();  // file names are the publisher's: none reads or sets an inherited member
    for (const f of list) files[f.name] = new Uint8Array(await f.arrayBuffer());
    return files;
  }

  async function droppedFiles(transfer) {
    // A dropped release folder (or its files): every file, by name.
    const entries = [...transfer.items].map((item) => item.webkitGetAsEntry && item.webkitGetAsEntry()).filter(Boolean);
    const file = (entry) => new Promise((ok, bad) => entry.file(ok, bad));
    const list = [];
    for (const entry of entries) {
      if (entry.isDirectory) {
        const inner = await new Promise((ok, bad) => entry.createReader().readEntries(ok, bad));
        for (const e of inner) if (e.isFile) list.push(await file(e));
      } else if (entry.isFile) {
        list.push(await file(entry));
      }
    }
    return readFiles(list);
  }

  async function tryVerify() {
    if (!state.files || !state.pem.trim()) return;
    try {
      const key = await pp.loadPublicKey(state.pem);
      say("fingerprint", `Key fingerprint: ${key.fingerprint}. Compare it with the one the publisher announced elsewhere.`);
      const release = await pp.verifyRelease(state.files, state.pem);
      state.statement = release.statement;
      say("verify-status", `OK: the release verifies: dataset ${JSON.stringify(release.statement.predicate.datasetId)}, version ${release.statement.predicate.releaseVersion}.`);
      buildForm(release.statement.predicate.schema);
    } catch (e) {
      state.statement = null;
      say("verify-status", e instanceof pp.ReleaseError ? `FAIL: ${e.path}: ${e.reason}: ${e.message}` : String(e));
      $("record-form").replaceChildren();
    }
  }

  function buildForm(schema) {
    const form = $("record-form");
    form.replaceChildren();
    schema.attributes.forEach((a, j) => {
      const label = document.createElement("label");
      label.htmlFor = `field-${j}`;
      label.textContent = a.name;
      let input;
      if (a.kind === "numeric") {
        input = document.createElement("input");
        input.type = "text";
        input.inputMode = "decimal";
      } else {
        input = document.createElement("select");
        for (const c of a.categories) {
          const o = document.createElement("option");
          o.value = c;
          o.textContent = c;
          input.append(o);
        }
      }
      input.id = `field-${j}`;
      input.dataset.name = a.name;
      const row = document.createElement("div");
      row.className = "row";
      row.append(label, input);
      form.append(row);
    });
    $("check").disabled = false;
  }

  pp.record_from_file = function record_from_file(bytes, name) {
    // Her record file as {attribute: value}, read as record.py reads it: strict JSON, one object, or a CSV file of
    // one row under its header; the values are checked when the form is checked.
    if (bytes.length > RECORD_BYTES) throw new pp.ReleaseError("RECORD_TOO_LARGE", name, `a record file holds at most ${RECORD_BYTES} bytes`);
    if (name.toLowerCase().endsWith(".csv")) {
      const rows = pp.csv_rows(bytes, name).filter((r) => r.length);
      if (rows.length !== 2) throw new pp.ReleaseError("RECORD_INVALID", name, "a record file holds exactly one row under its header");
      return Object.fromEntries(rows[0].map((h, i) => [h, rows[1][i]]));
    }
    let doc;
    try {
      doc = pp.loads_strict(new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes));
    } catch (e) {
      throw new pp.ReleaseError("RECORD_INVALID", name, "not a valid JSON record");
    }
    if (doc === null || typeof doc !== "object" || Array.isArray(doc)) throw new pp.ReleaseError("RECORD_INVALID", name, 'a JSON record is one object {"attribute": value, ...}');
    return doc;
  };

  async function fillFromFile(file) {
    if (!file) return;
    if (!state.statement) { say("record-status", "Verify the release first: the form follows its attributes."); return; }
    try {
      const record = pp.record_from_file(new Uint8Array(await file.arrayBuffer()), file.name);
      const attrs = state.statement.predicate.schema.attributes;
      attrs.forEach((a, j) => {
        if (Object.prototype.hasOwnProperty.call(record, a.name)) $(`field-${j}`).value = String(record[a.name]);
      });
      const missing = attrs.filter((a) => !Object.prototype.hasOwnProperty.call(record, a.name)).length;
      say("record-status", `Filled from ${file.name}${missing ? `; ${missing} of the release's attributes are not in it: type them` : ""}. Check the values, then check your record.`);
    } catch (e) {
      say("record-status", e instanceof pp.ReleaseError ? `FAIL: ${e.path}: ${e.reason}: ${e.message}` : String(e));
    }
  }

  function inWorker(message) {
    // The check in a worker made from this page's own script (a blob: address; nothing is fetched), with its
    // progress on the bar; where a worker cannot start, here.
    return new Promise((resolve) => {
      let worker;
      try {
        const code = document.querySelector("script").textContent;
        worker = new Worker(URL.createObjectURL(new Blob([code], { type: "text/javascript" })));
      } catch (e) {
        pp.ranIn = "page";
        resolve(checkOf(message)(message));
        return;
      }
      pp.ranIn = "worker";
      const bar = $("progress");
      bar.hidden = false;
      worker.onmessage = ({ data }) => {
        if (data.progress) { bar.max = data.progress[1]; bar.value = data.progress[0]; return; }
        bar.hidden = true;
        worker.terminate();
        resolve(data.result);
      };
      worker.onerror = () => { worker.terminate(); bar.hidden = true; pp.ranIn = "page"; resolve(checkOf(message)(message)); };
      worker.postMessage(message);
    });
  }

  pp.histogram_lines = function histogram_lines(distribution, distance, columns = 60) {
    // The random records' distances in at most 30 rows of bars, her distance's row marked (the TUI's twin); each
    // line fits `columns` characters (a phone's 360 pixels hold about 40), the bars from 6 to 30 wide.
    const top = Math.max(...Object.keys(distribution).map(Number), distance);
    const step = Math.ceil((top + 1) / 30);
    const rows = [];
    for (let start = 0; start <= top; start += step) {
      let share = 0;
      for (let d = start; d < start + step; d++) share += distribution[String(d)] || 0;
      rows.push([step === 1 ? String(start) : `${start}-${start + step - 1}`, start, share]);
    }
    const most = Math.max(...rows.map((r) => r[2])) || 1;
    const pad = Math.max(...rows.map((r) => r[0].length));
    const shares = rows.map((r) => pp.number(r[2], true));  // the one number format (number's twin), as the TUI's
    const room = Math.max(...shares.map((s) => s.length));
    const width = Math.max(6, Math.min(30, columns - pad - room - 2 - "  <- you".length));
    return rows.map(([label, start, share], i) => {
      const mine = distance >= start && distance < start + step ? "  <- you" : "";
      return `${label.padStart(pad)} ${"#".repeat(Math.round((width * share) / most)).padEnd(width)} ${shares[i].padStart(room)}${mine}`;
    });
  };

  const columnsOf = (element) => {
    // How many characters of its monospace font one line of `element` holds.
    const measure = document.createElement("canvas").getContext("2d");
    measure.font = getComputedStyle(element).font;
    const style = getComputedStyle(element);
    const inner = element.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    return Math.floor(inner / (measure.measureText("0").width || 8));
  };

  const policyLine = (policy) => `Your level was decided by the verdict policy "${pp.literal(policy.name)}", version ${policy.version} (SHA-256 ${policy.sha256}).`;

  function jointLines(out) {
    // verifier joint's report: her joint level and headline, its sentences, each release alone, the policy.
    const v = out.verdict;
    return [`${v.level.replaceAll("_", " ").toUpperCase()}: ${v.headline}`, ...v.lines.slice(1), "",
      "Each release alone:", ...out.releases.map((r) => `  ${r.release} (dataset ${JSON.stringify(r.dataset_id)}, version ${r.release_version}): ${r.level_alone.replaceAll("_", " ")}` +
        (r.checked_with.length ? `; its publisher checked it with ${r.checked_with.join(", ")}` : "")),
      "", policyLine(v.policy)];
  }

  const folderName = (list, fallback) => (list.length && list[0].webkitRelativePath ? list[0].webkitRelativePath.split("/")[0] : fallback);

  async function addOther(list) {
    // Another release of her, verified with the key given above before it joins her check.
    if (!state.pem.trim()) { say("others-status", "Give the publisher's key first (2.): every release is verified with it."); return; }
    try {
      const files = await readFiles(list);
      const release = await pp.verifyRelease(files, state.pem);
      const name = folderName(list, `release ${state.others.length + 2}`);
      state.others.push({ name, files });
      say("others-status", `Checked together with ${state.others.map((o) => o.name).join(", ")}: the last one verifies, dataset ${JSON.stringify(release.statement.predicate.datasetId)}, version ${release.statement.predicate.releaseVersion}.`);
      $("forget-others").hidden = false;
    } catch (e) {
      say("others-status", e instanceof pp.ReleaseError ? `FAIL: ${e.path}: ${e.reason}: ${e.message}` : String(e));
    }
  }

  function showVerdict(out) {
    // Her verdict first, in plain words and pictures (verifier.releases.plain_words); the full report follows.
    const box = $("verdict");
    box.replaceChildren();
    if (!out) return;
    const words = out.plain;  // checkRecord and checkJointly both give it
    const add = (tag, text) => { const e = document.createElement(tag); e.textContent = text; box.append(e); return e; };
    box.append(pp.level_badge(out.verdict.level));
    add("p", words.summary.join(" ")).className = "summary";
    for (const [name, entry] of Object.entries(out.attribute_disclosure || {})) {
      if (entry.risk === null || entry.risk === undefined) continue;
      box.append(pp.guess_picture(name, entry.risk, entry.prior, Boolean(out.releases)));
      const n = out.model === "generalized" ? (entry.worst_class_rows ?? out.class_size) : null;
      if (n && entry.mode === "group") box.append(pp.group_picture(n, Math.round(entry.risk * n), name));
    }
    if (out.random_distribution && out.distance !== null && out.distance !== undefined) {
      box.append(pp.match_picture(out.random_distribution, out.distance));
    }
    if (words.steps.length) {
      add("h3", "What you can do");
      const list = document.createElement("ul");
      for (const step of words.steps) { const li = document.createElement("li"); li.textContent = step; list.append(li); }
      box.append(list);
    }
    add("h3", "Details");
    const details = document.createElement("ul");
    for (const d of words.details) {
      const li = document.createElement("li");
      const head = document.createElement("strong");
      head.textContent = `${d.figure}: ${d.value}`;
      li.append(head, ` (${d.reading}). ${d.meaning}`);
      details.append(li);
    }
    box.append(details);
    add("h3", "The full report");
    found(box, words.summary[0]);
  }

  function found(where, sentence) {
    // What her check found, brought into view with the focus on it, and its first sentence said by screen readers
    // (the #announce live region; issue 60, item 3).
    where.scrollIntoView({ block: "start" });
    where.focus({ preventScroll: true });
    say("announce", sentence);
  }

  async function runCheck() {
    const record = pp.table();  // keyed by the release's attribute names, "__proto__" among them
    for (const input of $("record-form").querySelectorAll("[data-name]")) record[input.dataset.name] = input.value;
    showVerdict(null);
    say("announce", "");
    say("result", "Checking ...");
    const options = state.policy ? { policy: state.policy, policyName: state.policyName } : {};
    if (state.proof || state.logPolicy) {
      Object.assign(options, { proof: state.proof, proofName: state.proofName, logPolicy: state.logPolicy,
        logPolicyName: state.logPolicyName });
    }
    if (state.others.length) {
      const releases = [{ name: state.name, files: state.files }, ...state.others];
      const joint = await inWorker({ releases, publicKeyPem: state.pem, record, options: state.policy ? options : {} });
      if (joint.verified && !joint.reason) showVerdict(joint);
      say("result", joint.verified && !joint.reason ? jointLines(joint).join("\n") : joint.message);
      if (!joint.verified || joint.reason) found($("result"), joint.message);
      return;
    }
    const out = await inWorker({ files: state.files, publicKeyPem: state.pem, record, options });
    if (!out.verified || out.reason) {
      say("result", out.message);
      found($("result"), out.message);
      return;
    }
    showVerdict(out);
    const lines = out.verdict ? [`${out.verdict.level.replace("_", " ").toUpperCase()}: ${out.verdict.headline}`,
      ...out.verdict.lines.slice(1), ""] : [];
    if (out.log) lines.push(`Log: ${pp.standing_words(out.log)}.`, "");
    if (out.model === "generalized") {
      lines.push(`Released records consistent with your values: ${out.class_size} (rows ${out.class_rows.slice(0, 20).join(", ")}${out.class_rows.length > 20 ? ", ..." : ""}), in ${out.classes} published ${out.classes === 1 ? "group" : "groups"}; the publisher claims k = ${out.claimed.k}.`);
      lines.push("", policyLine(out.verdict.policy));
      say("result", lines.join("\n"));
      return;
    }
    lines.push(`Your permutation distance: ${out.distance} (the ranks between your record and its closest released record, on its farthest attribute).`,
      `Released records that match you: ${out.matches.join(", ")}.`);
    out.matches.forEach((m, i) => lines.push(`  record ${m}: rank deviations ${out.deviations[i].join(", ")}`));
    lines.push("", `Spread of the released values around your record, at your distance ${out.distance}:`);
    out.attributes.forEach((a, j) => lines.push(`  ${a}: ${out.variances[j].toPrecision(4)}` +
      (out.variances_at_claimed_distance ? ` (at the claimed D = ${out.claimed.distance}: ${out.variances_at_claimed_distance[j].toPrecision(4)}` +
        (out.claimed.variances ? `, claimed v ${out.claimed.variances[j].toPrecision(4)})` : ")") : "")));
    if (out.p_value !== undefined) {
      lines.push("", "Distances of random records built from the release's columns (yours marked):",
        ...pp.histogram_lines(out.random_distribution, out.distance, columnsOf($("result"))));
      lines.push("", `A random record matches as closely ${(100 * out.p_value).toPrecision(4)}% of the time (${out.random_method.replace("_", " ")}, ${out.random_records} random records): ` +
        (out.confidently_linked ? "an intruder who finds your match can be confident it is the right one." : "an intruder cannot tell your match from chance."));
    }
    if (out.claim_holds !== null) lines.push("", out.claim_holds ? "The publisher's claimed (D, v) holds for your record." : "The publisher's claimed (D, v) does NOT hold for your record.");
    lines.push("", policyLine(out.verdict.policy));
    say("result", lines.join("\n"));
  }

  window.addEventListener("DOMContentLoaded", () => {
    const load = async (read) => {
      try {
        state.files = await read();
      } catch (e) {  // a file over its limit, refused before it is read
        state.files = null;
        say("verify-status", e instanceof pp.ReleaseError ? `FAIL: ${e.path}: ${e.reason}: ${e.message}` : String(e));
        return;
      }
      await tryVerify();
    };
    $("folder").addEventListener("change", (e) => { state.name = folderName(e.target.files, "the release"); load(() => readFiles(e.target.files)); });
    $("other-folder").addEventListener("change", (e) => addOther(e.target.files));
    $("forget-others").addEventListener("click", () => {
      state.others = [];
      $("forget-others").hidden = true;
      say("others-status", "No other release: your record is checked in the release above.");
    });
    const drop = $("drop");
    drop.addEventListener("dragover", (e) => e.preventDefault());
    drop.addEventListener("drop", (e) => {
      e.preventDefault();
      load(() => droppedFiles(e.dataTransfer));
    });
    $("key-file").addEventListener("change", async (e) => { state.pem = await e.target.files[0].text(); $("key-text").value = state.pem; await tryVerify(); });
    $("key-text").addEventListener("change", async (e) => { state.pem = e.target.value; await tryVerify(); });
    $("policy-file").addEventListener("change", async (e) => {
      const file = e.target.files[0];
      state.policy = file ? new Uint8Array(await file.arrayBuffer()) : null;
      state.policyName = file ? file.name : null;
      say("policy-status", file ? `Your level will be decided by the policy in ${file.name}.` : "Your level will be decided by the verifier's default policy.");
    });
    const logFile = (id, key) => $(id).addEventListener("change", async (e) => {
      const file = e.target.files[0];
      state[key] = file ? new Uint8Array(await file.arrayBuffer()) : null;
      state[`${key}Name`] = file ? file.name : null;
      say("log-status", state.proof && state.logPolicy ? `The log proof ${state.proofName} will be checked under your policy ${state.logPolicyName}.`
        : state.proof || state.logPolicy ? "Give both the log proof and your log policy." : "No log proof: your verdict will say that nothing shows everyone is shown this release.");
    });
    logFile("proof-file", "proof");
    logFile("log-policy-file", "logPolicy");
    $("record-file").addEventListener("change", async (e) => { await fillFromFile(e.target.files[0]); });
    $("check").addEventListener("click", runCheck);
    $("record-form").addEventListener("submit", (e) => { e.preventDefault(); runCheck(); });
  });
})();
