// Global recoding (docs/method.md, Generalization): every QI released at one level of its
// hierarchy (a node of the lattice of levels), the classes of the records merged accordingly and
// the histograms remapped, never the records read again.
#pragma once

#include "algorithms/generalization/hierarchy.h"
#include "algorithms/base/histograms.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vbas
{

//! One QI's hierarchy and the hierarchy value of each of its codes (QiEncoder::valueCode).
struct QiHierarchy
{
    Hierarchy hierarchy;
    std::vector<std::uint32_t> valueOfCode;

    /**
     * The level of a value written as "*" (local or record suppression): the hierarchy's top
     * level when that level has a single label, else one more level above it.
     */
    std::size_t starLevel() const;

    //! The label id at a level of the value with this code; 0 at an added star level.
    std::uint32_t label( std::size_t level, std::uint32_t code ) const;

    //! The label at level `to` above label `labelId` at level `from` <= `to`.
    std::uint32_t ancestor( std::size_t from, std::uint32_t labelId, std::size_t to ) const;
};

//! A node of the generalization lattice: the level of each QI.
using LatticeNode = std::vector<std::size_t>;

//! The classes at a node: the generalized class of each original class, and the labels of each generalized class.
struct Generalization
{
    std::vector<std::uint32_t> classOf;
    std::vector<std::uint32_t> labels; //!< qi count label ids per generalized class, in class order
    std::size_t classCount = 0;
};

//! The generalized classes at node of the classes with these codes (QiEncoder::classCodes, qis.size() per class).
Generalization generalize( const std::vector<std::uint32_t> &classCodes, const std::vector<QiHierarchy> &qis, const LatticeNode &node );

//! The histograms with each class c counted as class classOf[c] (the entries of a row merged).
SparseHistograms remap( const SparseHistograms &histograms, const std::vector<std::uint32_t> &classOf );

} // namespace vbas
