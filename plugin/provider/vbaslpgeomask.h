// LP geomasking of postal codes (docs/method.md, LP geomasking): every patient's code moves at random to a
// nearby code with transition probabilities from a linear program (Revised-LP or WCMB-LP) that
// minimises the expected movement while keeping every re-identification probability at most epsilon.
#pragma once

#include "support/vbasqgiscompat.h"
#include "algorithms/lp/geomask.h"
#include "provider/vbasalgorithm.h"
#include "inputs/vbascodes.h"
#include "outputs/vbasoutputset.h"

#include <qgsprocessingutils.h>

class VbasLpGeomask : public VbasAlgorithm
{
  public:
    QString name() const override { return QStringLiteral( "lpgeomask" ); }
    QString displayName() const override { return QObject::tr( "LP geomasking of postal codes" ); }
    QString group() const override { return QObject::tr( "Geomasking" ); }
    QString groupId() const override { return QStringLiteral( "geomasking" ); }
    QString shortHelpString() const override;
    VbasLpGeomask *createInstance() const override { return new VbasLpGeomask(); }

  protected:
    void initAlgorithm( const QVariantMap &configuration = QVariantMap() ) override;
    bool prepareAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback *feedback ) override;
    QVariantMap processAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback *feedback ) override;

  private:
    enum class Solver
    {
      Automatic,
      ColumnGeneration,
      Direct,
    };

    struct Solved
    {
        vbas::lp::Solution solution;
        std::vector<double> published;        //!< P as TRANSITIONS holds it (vbas::lp::publishedProbabilities): the draws use it
        double reidentification = 0;          //!< recounted from published
        std::optional<double> smallestEpsilon; //!< with FIND_MIN_EPSILON
    };

    /**
     * The solution whose published P keeps every re-identification probability at most mEpsilon; the automatic
     * solver turns to column generation when the direct LP's round-off breaks it. An infeasible epsilon is
     * refused with the epsilon or m to try, a P above epsilon with nothing written.
     */
    Solved solve( const vbas::lp::Problem &problem, const VbasCodes &codes, QgsProcessingFeedback *feedback ) const;
    Solved solveBy( const vbas::lp::Problem &problem, const VbasCodes &codes, bool direct, QgsProcessingFeedback *feedback ) const;
    /**
     * The smallest feasible epsilon (vbas::lp::minimumEpsilon: the direct LP without costs, warm-started, up to
     * kFallbackPairs pairs, column generation when it cannot tell or above), as advised, when the run accepts it;
     * otherwise the smallest the run accepts, each epsilon tried by accepted. Nothing, with undecided saying why,
     * when the solvers cannot tell, or when even 1 is infeasible.
     */
    std::optional<double> smallestEpsilon( const vbas::lp::Problem &problem, QgsProcessingFeedback *feedback, QString &undecided ) const;
    //! epsilon rounded up to the 12 significant digits a message gives it with: the value advised is the value tried.
    static double advised( double epsilon );
    //! The run's solution at epsilon (solver and fallback as solve chooses them); no probabilities when it would be refused.
    vbas::lp::Solution accepted( vbas::lp::Problem problem, double epsilon, QgsProcessingFeedback *feedback ) const;
    QString unhideable( const vbas::lp::Problem &problem, const VbasCodes &codes ) const;
    vbas::lp::Solution solveWith( const vbas::lp::Problem &problem, bool direct, QgsProcessingFeedback *feedback ) const;
    //! The solution, or the run refused when it was canceled.
    static vbas::lp::Solution notCanceled( vbas::lp::Solution solution, QgsProcessingFeedback *feedback );
    /**
     * solveWith, and once by the other solver, with a line in the log, when it gives no answer that can be trusted
     * (vbas::lp::SolverError) or column generation stalls (not to the direct LP above kFallbackPairs pairs); direct
     * tells which solver answered. Refuses the run, saying why, when neither gives transition probabilities.
     */
    vbas::lp::Solution solveOrFallBack( const vbas::lp::Problem &problem, bool &direct, QgsProcessingFeedback *feedback ) const;
    //! The stopped solution when it holds transition probabilities (STATUS limit); otherwise refuses the run with why.
    vbas::lp::Solution limitOrRefuse( const std::optional<vbas::lp::Solution> &stopped, const QString &why, const vbas::lp::Problem &problem ) const;
    //! RELEASE_FIELDS as field indexes of the patients, refusing a missing field, their code and their feature id.
    void readReleasedFields( const QVariantMap &parameters, QgsProcessingContext &context );
    //! Refuses a released field that is (nearly) unique or follows the original code, naming it and why.
    void checkReleasedFields( const VbasPatients &patients ) const;
    //! A code holding more patients than people: refused for Revised-LP (eq. 8 assumes at most n_i patients in code i), a warning for WCMB-LP; either names the code.
    void checkPopulations( const VbasCodes &codes, const VbasPatients &patients, QgsProcessingFeedback *feedback ) const;
    //! The draws' seed: SEED, or 64 bits of the operating system's random source; says in the log who can undo the masking.
    void readSeed( const QVariantMap &parameters, QgsProcessingContext &context );
    void logSeed( QgsProcessingFeedback *feedback ) const;
    VbasOutputSchema randomisedSchema() const;
    //! TRANSITIONS: every P_ij above 0 as the draws used it.
    static void writeTransitions( VbasOutput &output, const vbas::lp::Problem &problem, const std::vector<double> &published, const VbasCodes &codes );

    std::unique_ptr<QgsProcessingFeatureSource> mCodesSource;
    std::unique_ptr<QgsProcessingFeatureSource> mPatientsSource;
    VbasCodeFields mCodeFields;
    QString mPatientCodeField;
    int mPatientCodeIndex = -1;
    QgsAttributeList mReleasedFields; //!< the patients' fields named in RELEASE_FIELDS
    double mEpsilon = 0.2;
    std::int64_t mNeighbours = 30;
    double mRadius = 0;
    vbas::lp::Model mModel = vbas::lp::Model::Revised;
    Solver mSolver = Solver::Automatic;
    std::uint64_t mSeed = 0; //!< a secret: in no output and not in the log
    bool mSeedGiven = false;
    bool mFindMinEpsilon = false;
    double mEpsilonTolerance = 1e-3;
    bool mAudit = false;
    vbasqgis::FieldType mCodeType = vbasqgis::Field::String;
    VbasOutputSet mOutputs;
};
