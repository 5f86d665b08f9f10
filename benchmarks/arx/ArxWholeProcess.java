// ARX's side of issue 41's benchmark (docs/performance.md): one whole process on one table, for the same rows
// that `python -m benchmarks.generalization_pace` gives `publisher anonymize`. Not part of the project, and no test needs it:
// ARX is built from its own repository (docs/performance.md says how).
//
//   java -cp CLASSES:JARS ArxWholeProcess TABLE.csv HIERARCHY_DIR OUT.csv global|local [risk]
//
// Quasi-identifiers age, education, marital-status, race and sex with ARX's Adult hierarchies, the other columns
// insensitive, k = 5, quality model Loss. global: global recoding, suppression limit 0. local: suppression limit 1,
// then optimizeIterativeFast(output, 0.01), as in ../shared/data/external/arx. With risk, the output's risk
// analysis too (issue 51): RiskEstimateBuilder's sample-based re-identification risks and their distribution over
// the records. Prints the seconds of anonymize, of the risk analysis and of the output's write; the caller times
// the whole process.

import java.nio.charset.StandardCharsets;

import org.deidentifier.arx.ARXAnonymizer;
import org.deidentifier.arx.ARXConfiguration;
import org.deidentifier.arx.ARXPopulationModel;
import org.deidentifier.arx.ARXPopulationModel.Region;
import org.deidentifier.arx.ARXResult;
import org.deidentifier.arx.AttributeType;
import org.deidentifier.arx.AttributeType.Hierarchy;
import org.deidentifier.arx.Data;
import org.deidentifier.arx.DataHandle;
import org.deidentifier.arx.risk.RiskEstimateBuilder;
import org.deidentifier.arx.risk.RiskModelSampleRiskDistribution;
import org.deidentifier.arx.risk.RiskModelSampleRisks;
import org.deidentifier.arx.criteria.KAnonymity;
import org.deidentifier.arx.metric.Metric;

public class ArxWholeProcess {
    static final String[] QIS = {"age", "education", "marital-status", "race", "sex"};

    public static void main(String[] args) throws Exception {
        boolean local = args[3].equals("local");
        Data data = Data.create(args[0], StandardCharsets.UTF_8, ',');
        for (int j = 0; j < data.getHandle().getNumColumns(); j++) {
            data.getDefinition().setAttributeType(data.getHandle().getAttributeName(j),
                                                  AttributeType.INSENSITIVE_ATTRIBUTE);
        }
        for (String qi : QIS) {
            String file = args[1] + "/adult_hierarchy_" + qi + ".csv";
            data.getDefinition().setAttributeType(qi, Hierarchy.create(file, StandardCharsets.UTF_8, ';'));
        }
        ARXConfiguration config = ARXConfiguration.create();
        config.addPrivacyModel(new KAnonymity(5));
        config.setSuppressionLimit(local ? 1d : 0d);
        config.setQualityModel(local ? Metric.createLossMetric(0d) : Metric.createLossMetric());
        long start = System.nanoTime();
        ARXResult result = new ARXAnonymizer().anonymize(data, config);
        DataHandle output = result.getOutput();
        if (local) {
            result.optimizeIterativeFast(output, 0.01d);
        }
        long anonymized = System.nanoTime();
        if (args.length > 4 && args[4].equals("risk")) {
            RiskEstimateBuilder risks = output.getRiskEstimator(ARXPopulationModel.create(Region.USA));
            RiskModelSampleRisks sample = risks.getSampleBasedReidentificationRisk();
            RiskModelSampleRiskDistribution distribution = risks.getSampleBasedRiskDistribution();
            System.out.printf("highest risk %.6f (%.4f of records), average %.6f, records at risk above 0.2: %.4f%n",
                              sample.getHighestRisk(), sample.getFractionOfRecordsAffectedByHighestRisk(),
                              sample.getAverageRisk(), 1 - distribution.getFractionOfRecordsAtCumulativeRisk(0.2));
        }
        long assessed = System.nanoTime();
        output.save(args[2], ',');
        long written = System.nanoTime();
        System.out.printf("anonymize %.3f s, risks %.3f s, write %.3f s%n", (anonymized - start) / 1e9,
                          (assessed - anonymized) / 1e9, (written - assessed) / 1e9);
    }
}
