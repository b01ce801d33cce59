// LP geomasking of postal codes (docs/method.md, LP geomasking): every patient's code moves at random to a
// nearby code with transition probabilities from a linear program (Revised-LP or WCMB-LP) that
// minimises the expected movement while keeping every re-identification probability at most epsilon.
#pragma once

#include "plugin/support/vbasqgiscompat.h"
#include "algorithms/lp/geomask.h"
#include "algorithms/lp/solve_policy.h"
#include "plugin/provider/vbasalgorithm.h"
#include "plugin/inputs/vbascodes.h"
#include "plugin/outputs/vbasoutputset.h"

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
    /**
     * The solution whose published P keeps every re-identification probability at most mEpsilon, by the core's
     * policy (vbas::lp::solveByPolicy), its fallbacks and findings in the log. Refuses the run, saying why, when the
     * policy gives no such P: no P that can be trusted, an infeasible epsilon (with the epsilon or m to try), a P above epsilon, a cancel.
     */
    vbas::lp::Pass solve( const vbas::lp::Problem &problem, const VbasCodes &codes, QgsProcessingFeedback *feedback ) const;
    //! The pass's fallbacks in the log, and unless the run is refused, its smallest epsilon or why it could not be found.
    void logPass( const vbas::lp::Pass &pass, bool refused, QgsProcessingFeedback *feedback ) const;
    //! Why a solver gave no transition probabilities that can be trusted, as a sentence.
    static QString why( const vbas::lp::Failure &failure );
    //! The refusal of an infeasible EPSILON: the smallest feasible epsilon, or why it is not known, or the m or model to try.
    QString infeasible( const vbas::lp::Pass &pass ) const;
    //! How close the smallest epsilon given is (EPSILON_TOLERANCE).
    QString tolerance() const;
    QString unhideable( const vbas::lp::Problem &problem, const VbasCodes &codes ) const;
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
    vbas::lp::Solver mSolver = vbas::lp::Solver::Automatic;
    std::uint64_t mSeed = 0; //!< a secret: in no output and not in the log
    bool mSeedGiven = false;
    bool mFindMinEpsilon = false;
    double mEpsilonTolerance = 1e-3;
    bool mAudit = false;
    vbasqgis::FieldType mCodeType = vbasqgis::Field::String;
    VbasOutputSet mOutputs;
};
