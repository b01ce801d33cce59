// The checker's reading of a generalized release (docs/algorithms/checkanonymity.md, "A generalized
// release"): from its lookup's qi_levels and hierarchies, whether a population table's value of a QI is
// under a value the release wrote: "*" (or NULL in a field that is not text) covers every value; a label
// of a hierarchy file the values its rows put under it at the release's level; an interval label
// ("[20, 30)", "[80, inf)") the numbers and bands inside it, read from the label itself; any other value
// itself. Code of its own: it shares none with the release's labels (vbas::writtenResidents).
#pragma once

#include "plugin/inputs/vbashierarchyfile.h"

#include <QHash>
#include <QMap>
#include <QString>
#include <QStringList>
#include <QVariant>

#include <optional>
#include <vector>

class VbasWrittenLabels
{
  public:
    /**
     * qiLevels and hierarchies: the lookup's fields ("age = 2 of 4, sex = 0 of 1"; "age=age.csv sha256:<hex>;
     * sex=*"); names: the release's QI fields (its unit left out), text whether each is a text field;
     * files: HIERARCHIES read, by QI field. Refused: a QI the lookup does not name, and a QI generalized by
     * a hierarchy file that files lacks or holds with other bytes.
     */
    VbasWrittenLabels( const QString &qiLevels, const QString &hierarchies, const QStringList &names, const std::vector<bool> &text, const QMap<QString, VbasHierarchyFile> &files );

    //! Whether the population table's value census of QI q is under written, the release's value as its text (null: NULL).
    bool under( int q, const QVariant &census, const QString &written ) const;

  private:
    struct Qi
    {
        std::size_t level = 0;
        bool text = true;
        std::optional<vbas::Hierarchy> file; //!< the QI's hierarchy file, at a level above 0
        bool intervals = false;              //!< the QI's labels are intervals
    };
    bool labelHolds( const Qi &qi, const QVariant &census, const QString &written ) const;

    std::vector<Qi> mQis;
    mutable std::vector<QHash<QString, bool>> mMemo; //!< per QI: census text, then written text -> under
};
