DROP TABLE IF EXISTS declared_products;
